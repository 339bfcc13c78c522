import { describe, expect, it } from "vitest";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { ModelResponseWatch } from "./model-response-watch.js";
import type { ProviderAdapter, ProviderEvent, ProviderTurnRequest } from "./providers/provider-adapter.js";
import { Session } from "./session.js";
import { scriptedSessionSetup } from "./testing/scripted-session.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const retryNotice = (attempt: number): ProviderEvent => ({
  type: "activity",
  notice: true,
  activity: { id: "retry", kind: "other", status: "started", title: `retrying, attempt ${attempt}` },
});
const command = (status: "started" | "completed"): ProviderEvent => ({
  type: "activity",
  activity: { id: "command-1", kind: "command", status, title: "npm install" },
});

/** A watch whose timeouts are counted, with the time each fired (ms since it was made). */
function countedWatch(timeoutMs: number) {
  const startedAt = performance.now();
  const fired: number[] = [];
  const watch = new ModelResponseWatch(timeoutMs, () => fired.push(performance.now() - startedAt));
  return { watch, fired };
}

describe("ModelResponseWatch", () => {
  it("fires once when the model makes no progress, however many retry notices come", async () => {
    const { watch, fired } = countedWatch(120);
    for (let attempt = 1; attempt <= 8; attempt += 1) {
      watch.observe(retryNotice(attempt));
      watch.observe({ type: "output-seen" });
      await sleep(25);
    }
    await expect.poll(() => fired.length, { timeout: 2_000 }).toBe(1);
    expect(fired[0]).toBeGreaterThanOrEqual(119);
    expect(fired[0]).toBeLessThan(400);
    await sleep(200);
    expect(fired).toHaveLength(1);
  });

  it("restarts the wait on progress", async () => {
    const { watch, fired } = countedWatch(100);
    for (let index = 0; index < 6; index += 1) {
      await sleep(50);
      watch.observe({ type: "text-delta", messageId: "m1", delta: "." });
    }
    expect(fired).toHaveLength(0);
    watch.stop();
  });

  it("holds while a command runs or a page tool call is pending, and waits the whole bound after each", async () => {
    const { watch, fired } = countedWatch(80);
    watch.observe(command("started"));
    await sleep(200);
    expect(fired).toHaveLength(0);
    watch.observe(command("completed"));
    watch.pause();
    await sleep(200);
    expect(fired).toHaveLength(0);
    watch.resume();
    await sleep(40);
    expect(fired).toHaveLength(0);
    await expect.poll(() => fired.length, { timeout: 2_000 }).toBe(1);
  });

  it("never fires once stopped", async () => {
    const { watch, fired } = countedWatch(30);
    watch.stop();
    await sleep(100);
    expect(fired).toHaveLength(0);
  });
});

describe("a session whose model does not answer", () => {
  it("ends the turn with PROVIDER_TIMEOUT and stops the provider, while the provider only says it is retrying", async () => {
    const published: SessionEventEnvelope[] = [];
    let abortedWith: unknown;
    const adapter = {
      displayName: "Scripted",
      capabilities: { textDeltas: true, resume: true },
      runTurn: async (request: ProviderTurnRequest, onEvent: (event: ProviderEvent) => void) => {
        for (let attempt = 1; !request.signal.aborted; attempt += 1) {
          onEvent(retryNotice(attempt));
          await sleep(20);
        }
        abortedWith = request.signal.reason;
        return { ok: false, error: request.signal.reason };
      },
    } as unknown as ProviderAdapter;
    const session = new Session({ ...scriptedSessionSetup(adapter, published), modelResponseTimeoutMs: 300 });
    const startedAt = performance.now();
    session.startTurn("t1", "go");
    const failed = () => published.map((envelope) => envelope.event).find((event) => event.type === "turn-failed");
    await expect.poll(failed, { timeout: 5_000 }).toMatchObject({
      error: {
        code: "PROVIDER_TIMEOUT",
        message: expect.stringMatching(/^Scripted's model made no progress for 0 s and the turn was stopped \(last: retrying, attempt \d+\)$/),
        details: { timeoutSeconds: 0.3, retriable: true, lastNotice: expect.stringMatching(/^retrying, attempt \d+$/) },
      },
    });
    expect(performance.now() - startedAt).toBeLessThan(2_000);
    expect(abortedWith).toMatchObject({ code: "PROVIDER_TIMEOUT" });
    // The notices reached the page as activities.
    expect(published.some((envelope) => envelope.event.type === "activity-updated")).toBe(true);
  });
});
