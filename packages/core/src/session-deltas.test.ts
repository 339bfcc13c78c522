import { describe, expect, it } from "vitest";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { ProviderAdapter, ProviderEvent, ProviderTurnRequest } from "./providers/provider-adapter.js";
import { Session } from "./session.js";
import { scriptedSessionSetup } from "./testing/scripted-session.js";

/** One provider "read" per batch: its events are handed over in one go, then the event loop turns. */
function sessionReading(batches: ProviderEvent[][]) {
  const published: SessionEventEnvelope[] = [];
  const arrivals: { seq: number; batch: number }[] = [];
  let batchIndex = -1;
  const adapter = {
    displayName: "Scripted",
    capabilities: { textDeltas: true, resume: true },
    runTurn: async (_request: ProviderTurnRequest, onEvent: (event: ProviderEvent) => void) => {
      for (const [index, batch] of batches.entries()) {
        batchIndex = index;
        for (const event of batch) onEvent(event);
        // The next read comes after the flush the session scheduled for this one (setImmediate callbacks run in the
        // order they were queued); a timer here would race it on a busy machine.
        await new Promise((resolve) => setImmediate(resolve));
      }
      return { ok: true };
    },
  } as unknown as ProviderAdapter;
  const setup = scriptedSessionSetup(adapter, published);
  const session = new Session({
    ...setup,
    publish: (envelope) => {
      arrivals.push({ seq: envelope.seq, batch: batchIndex });
      published.push(envelope);
    },
  });
  return { session, published, arrivals };
}

const delta = (messageId: string, text: string): ProviderEvent => ({ type: "text-delta", messageId, delta: text });

describe("Session joins the text deltas of one provider read", () => {
  it("sends the first delta at once and the rest of the read as one event, losing and reordering nothing", async () => {
    const pieces = Array.from({ length: 500 }, (_, index) => `${index} `);
    const { session, published, arrivals } = sessionReading([
      pieces.slice(0, 250).map((piece) => delta("m1", piece)),
      pieces.slice(250).map((piece) => delta("m1", piece)),
      [{ type: "message-completed", messageId: "m1", text: pieces.join("") }],
    ]);
    session.startTurn("t1", "go");
    await expect.poll(() => published.some((envelope) => envelope.event.type === "turn-completed")).toBe(true);
    const deltas = published.filter((envelope) => envelope.event.type === "chat-delta");
    // Per read: the first delta alone, then the other 249 joined.
    expect(deltas.map((envelope) => (envelope.event as { delta: string }).delta)).toEqual([
      "0 ",
      pieces.slice(1, 250).join(""),
      "250 ",
      pieces.slice(251).join(""),
    ]);
    // The first delta of a read left during that read; the joined rest before the next read began.
    const batchOf = (seq: number) => arrivals.find((arrival) => arrival.seq === seq)?.batch;
    expect(deltas.map((envelope) => batchOf(envelope.seq))).toEqual([0, 0, 1, 1]);
    const seqs = published.map((envelope) => envelope.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
  });

  it("never lets a later event overtake joined deltas, and keeps messages apart", async () => {
    const { session, published } = sessionReading([
      [
        delta("m1", "a"),
        delta("m1", "b"),
        delta("m1", "c"),
        { type: "message-completed", messageId: "m1", text: "abc" },
        delta("m2", "x"),
        delta("m2", "y"),
        { type: "activity", activity: { id: "a1", kind: "command", status: "started", title: "ls" } },
        delta("m2", "z"),
      ],
      [{ type: "message-completed", messageId: "m2", text: "xyz" }],
    ]);
    session.startTurn("t1", "go");
    await expect.poll(() => published.some((envelope) => envelope.event.type === "turn-completed")).toBe(true);
    const chat = published
      .map((envelope) => envelope.event)
      .filter((event) => event.type === "chat-delta" || event.type === "chat-completed" || event.type === "activity-updated")
      .map((event) =>
        event.type === "chat-delta" ? `delta ${event.messageId} ${event.delta}` : event.type === "chat-completed" ? `done ${event.messageId}` : "activity",
      );
    expect(chat).toEqual(["delta m1 a", "delta m1 bc", "done m1", "delta m2 xy", "activity", "delta m2 z", "done m2"]);
  });
});

describe("Session's idle watch", () => {
  /** A provider that speaks every `everyMs` for `forMs`, then (when `hangAfter`) goes silent until it is stopped. */
  function sessionSpeaking(everyMs: number, forMs: number, hangAfter: boolean) {
    const published: SessionEventEnvelope[] = [];
    const adapter = {
      displayName: "Scripted",
      capabilities: { textDeltas: true, resume: true },
      runTurn: async (request: ProviderTurnRequest, onEvent: (event: ProviderEvent) => void) => {
        const started = Date.now();
        while (Date.now() - started < forMs) {
          onEvent(delta("m1", "."));
          await new Promise((resolve) => setTimeout(resolve, everyMs));
        }
        if (!hangAfter) return { ok: true };
        await new Promise((resolve) => request.signal.addEventListener("abort", resolve, { once: true }));
        return { ok: false, error: request.signal.reason, conversationLost: false };
      },
    } as unknown as ProviderAdapter;
    const session = new Session({ ...scriptedSessionSetup(adapter, published), providerIdleTimeoutMs: 250 });
    return { session, published };
  }
  const outcome = (published: SessionEventEnvelope[]) =>
    published.map((envelope) => envelope.event).find((event) => event.type === "turn-completed" || event.type === "turn-failed");

  it("lets a provider that keeps talking run longer than the idle timeout", async () => {
    const { session, published } = sessionSpeaking(50, 700, false);
    session.startTurn("t1", "go");
    await expect.poll(() => outcome(published), { timeout: 5_000 }).toMatchObject({ type: "turn-completed" });
  });

  it("stops a provider that falls silent with PROVIDER_FAILED", async () => {
    const { session, published } = sessionSpeaking(50, 300, true);
    session.startTurn("t1", "go");
    await expect.poll(() => outcome(published), { timeout: 5_000 }).toMatchObject({
      type: "turn-failed",
      error: { code: "PROVIDER_FAILED", message: expect.stringContaining("produced no output") },
    });
  });
});
