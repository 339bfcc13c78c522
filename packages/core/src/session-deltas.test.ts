import { describe, expect, it, vi } from "vitest";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { ProviderAdapter, ProviderEvent, ProviderTurnRequest } from "./providers/provider-adapter.js";
import { CHAT_DELTA_WINDOW_MS, Session } from "./session.js";
import { scriptedSessionSetup } from "./testing/scripted-session.js";

/**
 * One provider "read" per batch: its events are handed over in one go. `before(index)` runs before each batch after the
 * first (by default one turn of the event loop).
 */
function sessionReading(
  batches: ProviderEvent[][],
  before: (index: number) => Promise<unknown> = () => new Promise((resolve) => setImmediate(resolve)),
) {
  const published: SessionEventEnvelope[] = [];
  const arrivals: { seq: number; batch: number; at: number }[] = [];
  let batchIndex = -1;
  const adapter = {
    displayName: "Scripted",
    capabilities: { textDeltas: true, resume: true },
    runTurn: async (_request: ProviderTurnRequest, onEvent: (event: ProviderEvent) => void) => {
      for (const [index, batch] of batches.entries()) {
        if (index > 0) await before(index);
        batchIndex = index;
        for (const event of batch) onEvent(event);
      }
      return { ok: true };
    },
  } as unknown as ProviderAdapter;
  const setup = scriptedSessionSetup(adapter, published);
  const session = new Session({
    ...setup,
    publish: (envelope) => {
      arrivals.push({ seq: envelope.seq, batch: batchIndex, at: performance.now() });
      published.push(envelope);
    },
  });
  return { session, published, arrivals };
}

const delta = (messageId: string, text: string): ProviderEvent => ({ type: "text-delta", messageId, delta: text });
const deltaTexts = (published: SessionEventEnvelope[]) =>
  published.flatMap((envelope) => (envelope.event.type === "chat-delta" ? [envelope.event.delta] : []));

describe("Session joins text deltas that follow each other within a frame", () => {
  it("sends the first delta at once and joins the rest of the window into one event, losing and reordering nothing", async () => {
    const pieces = Array.from({ length: 500 }, (_, index) => `${index} `);
    const { session, published, arrivals } = sessionReading(
      [pieces.map((piece) => delta("m1", piece)), [{ type: "message-completed", messageId: "m1", text: pieces.join("") }]],
      // The provider says nothing more until the window has closed, so only the window can send the joined rest.
      () => expect.poll(() => deltaTexts(published).length).toBe(2),
    );
    session.startTurn("t1", "go");
    await expect.poll(() => published.some((envelope) => envelope.event.type === "turn-completed")).toBe(true);
    expect(deltaTexts(published)).toEqual(["0 ", pieces.slice(1).join("")]);
    const [first, joined] = published
      .filter((envelope) => envelope.event.type === "chat-delta")
      .map((envelope) => arrivals.find((arrival) => arrival.seq === envelope.seq)!);
    // Both left during the first read's window, the joined rest one window after the first.
    expect([first!.batch, joined!.batch]).toEqual([0, 0]);
    expect(joined!.at - first!.at).toBeGreaterThanOrEqual(CHAT_DELTA_WINDOW_MS - 1);
    const seqs = published.map((envelope) => envelope.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
  });

  it("joins reads that come within the window, and starts anew with a read after it closed", async () => {
    // The window's timer is under the test's control, so "within" and "after" do not depend on the machine's speed.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const pieces = Array.from({ length: 600 }, (_, index) => `${index} `);
      const { session, published } = sessionReading(
        [
          pieces.slice(0, 200).map((piece) => delta("m1", piece)),
          pieces.slice(200, 400).map((piece) => delta("m1", piece)),
          pieces.slice(400).map((piece) => delta("m1", piece)),
          [{ type: "message-completed", messageId: "m1", text: pieces.join("") }],
        ],
        async (index) => {
          await new Promise((resolve) => setImmediate(resolve));
          if (index === 2) vi.advanceTimersByTime(CHAT_DELTA_WINDOW_MS);
        },
      );
      const completed = new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (published.some((envelope) => envelope.event.type === "turn-completed")) {
            clearInterval(check);
            resolve();
          }
        }, 1);
      });
      session.startTurn("t1", "go");
      await completed;
      expect(deltaTexts(published)).toEqual(["0 ", pieces.slice(1, 400).join(""), "400 ", pieces.slice(401).join("")]);
    } finally {
      vi.useRealTimers();
    }
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
        event.type === "chat-delta"
          ? `delta ${event.messageId} ${event.delta}`
          : event.type === "chat-completed"
            ? `done ${event.messageId}`
            : "activity",
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
    await expect
      .poll(() => outcome(published), { timeout: 5_000 })
      .toMatchObject({
        type: "turn-failed",
        error: { code: "PROVIDER_FAILED", message: expect.stringContaining("produced no output") },
      });
  });
});
