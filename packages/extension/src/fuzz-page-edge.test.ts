import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPageRequestType, pageRequestSchemas, requestIdSchema } from "@pedelec/protocol/page-wire";
import {
  anyJsonValue,
  fuzzSettings,
  fuzzSummaryLine,
  isCodedError,
  mutatedMessage,
  OutcomeTally,
  rawBytes,
} from "@pedelec/protocol/testing/fuzz-values";
import { flattenStrings, HEAP_GROWTH_LIMIT_BYTES, HeapGrowth } from "@pedelec/protocol/testing/heap-growth";
import { APP, setup, type GatewayContext } from "./testing/gateway-harness.js";
import { sessionInfo, type FakePagePort } from "./testing/fakes.js";

const SESSION = "session-aaaaaaaa";

/** One valid request of every type a page may send. */
const templates: Record<string, unknown>[] = [
  { id: "status", type: "getApprovalStatus", payload: {} },
  { id: "create", type: "createSession", payload: {} },
  { id: "create-model", type: "createSession", payload: { provider: "claude", model: "sonnet", autoEndOnDisconnect: false } },
  { id: "create-folder", type: "createSession", payload: { workspace: { path: "/home/user/project" } } },
  { id: "resume", type: "resumeSession", payload: { sessionId: SESSION } },
  { id: "resume-after", type: "resumeSession", payload: { sessionId: SESSION, afterSeq: 12 } },
  { id: "prepare", type: "prepareSession", payload: { sessionId: SESSION, turnId: "prep-1" } },
  { id: "claim", type: "claimToolCall", payload: { sessionId: SESSION, toolRequestId: "tool-request-1" } },
  { id: "send", type: "sendText", payload: { sessionId: SESSION, turnId: "turn-1", text: "hello" } },
  {
    id: "submit",
    type: "submitToolResult",
    payload: { sessionId: SESSION, toolRequestId: "tool-request-1", outcome: { ok: true, result: { done: true } } },
  },
  { id: "cancel", type: "cancelTurn", payload: { sessionId: SESSION } },
  { id: "end", type: "endSession", payload: { sessionId: SESSION } },
  { id: "providers", type: "listProviders", payload: {} },
  { id: "settings", type: "getSettings", payload: {} },
  { id: "run", type: "runWorkspaceScript", payload: { sessionId: SESSION, runId: "run-1", source: "console.log(1)" } },
  { id: "run-full", type: "runWorkspaceScript", payload: { sessionId: SESSION, runId: "run-2", access: "full", entry: "main.ts" } },
  { id: "stop-run", type: "cancelWorkspaceRun", payload: { sessionId: SESSION, runId: "run-1" } },
  { id: "upload", type: "prepareAssetUpload", payload: { sessionId: SESSION, path: "/inbox/a.csv", sizeBytes: 10 } },
  { id: "download", type: "prepareAssetDownload", payload: { sessionId: SESSION, path: "/inbox/a.csv" } },
  { id: "assets", type: "listAssets", payload: { sessionId: SESSION } },
];

/** What a page may post: protocol-shaped requests with one field spoiled, any JSON value, or bytes. */
const pageMessage: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: mutatedMessage(templates).map((mutated) => mutated.message), weight: 8 },
  { arbitrary: anyJsonValue, weight: 1 },
  { arbitrary: fc.record({ id: fc.string({ maxLength: 8 }), type: fc.string(), payload: anyJsonValue }), weight: 1 },
  { arbitrary: rawBytes, weight: 1 },
);

/**
 * Plays the native host: every request the extension forwards gets an answer, as Core would give one. Answered frames
 * are taken off the channel's record, so the test itself keeps nothing per message.
 */
function answerHostRequests(context: GatewayContext, sessionIds: () => string): void {
  for (const channel of context.host.channels) {
    if (channel.closed) continue;
    const frames = channel.sent.splice(0);
    for (const frame of frames) {
      if (frame.type === "createSession" || frame.type === "resumeSession") channel.respond(frame, sessionInfo(sessionIds(), false));
      else channel.fail(frame, "THREAD_NOT_FOUND", "no such session");
    }
  }
}

type Response = { id: string; ok: boolean; result?: unknown; error?: unknown };

function responsesOn(port: FakePagePort): Response[] {
  return port.sent.filter((message): message is Response => typeof message === "object" && message !== null && "ok" in message);
}

describe("page → extension edge (PageGateway) under fuzzing", () => {
  it("answers every request that has an id exactly once, with a coded error or a valid result, keeps serving, and keeps no memory per message", async () => {
    const settings = fuzzSettings(process.env);
    console.log(`[fuzz page-edge] seed=${settings.seed} runs=${settings.runs} (replay with FUZZ_SEED=${settings.seed})`);
    const messages = fc.sample(pageMessage, { seed: settings.seed, numRuns: settings.runs });
    const context = await setup({ approved: [APP], windowFailure: new Error("no windows in this test"), approvalTimeoutMs: 1_000 });
    const port = context.connect();
    let sessionCount = 0;
    const nextSessionId = () => `session-${String(++sessionCount).padStart(8, "0")}`;
    flattenStrings(messages);
    const heap = new HeapGrowth(messages.length);
    const tally = new OutcomeTally();
    const memoryBefore = process.memoryUsage().rss;
    const started = performance.now();
    let expectedResponses = 0;
    // Answers the page got, counted as the port's record is cleared before each message.
    let responseTotal = 0;

    for (const [index, message] of messages.entries()) {
      heap.beforeMessage(index);
      responseTotal += responsesOn(port).length;
      port.sent.length = 0;
      // The harness records what the gateway warns about (the extension's console); a page's log is not the gateway's.
      context.warnings.length = 0;
      // A throw out of the gateway would surface right here, from the listener.
      port.fromPage(message);
      const id = requestIdSchema.safeParse((message as { id?: unknown } | null)?.id);
      if (!id.success) continue;
      expectedResponses += 1;
      const deadline = performance.now() + 5_000;
      while (responsesOn(port).length === 0) {
        if (performance.now() > deadline) throw new Error(`message #${index} (seed ${settings.seed}) got no answer: ${JSON.stringify(message)}`);
        answerHostRequests(context, nextSessionId);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const response = responsesOn(port)[0]!;
      expect(response.id, `message #${index} answered under another id`).toBe(id.data);
      if (response.ok) {
        const type = (message as { type: string }).type;
        expect(isPageRequestType(type), `message #${index}: success for unknown type ${type}`).toBe(true);
        const result = pageRequestSchemas[type as keyof typeof pageRequestSchemas].result.safeParse(response.result);
        expect(result.success, `message #${index}: invalid ${type} result ${JSON.stringify(response.result)}`).toBe(true);
        tally.add("ok");
      } else {
        expect(isCodedError(response.error), `message #${index}: uncoded error ${JSON.stringify(response.error)}`).toBe(true);
        tally.add((response.error as { code: string }).code);
      }
    }

    // Nothing is answered twice, including late answers to earlier messages.
    responseTotal += responsesOn(port).length;
    expect(responseTotal).toBe(expectedResponses);
    port.fromPage({ id: "after-the-batch", type: "getApprovalStatus", payload: {} });
    await expect
      .poll(() => responsesOn(port).find((response) => response.id === "after-the-batch"), { timeout: 2_000, interval: 2 })
      .toMatchObject({ ok: true, result: { installed: true, approved: true, origin: APP } });
    expect(context.windows.created).toBe(0);

    const memoryAfter = process.memoryUsage().rss;
    console.log(
      fuzzSummaryLine({
        edge: "page-edge",
        sent: messages.length,
        tally,
        seed: settings.seed,
        durationMs: performance.now() - started,
        memoryBefore,
        memoryAfter,
      }),
    );
    expect(tally.total).toBe(expectedResponses);
    // The gateway rightly keeps a route for each session the page created (some 5 KB each) while the page is there;
    // once it leaves, nothing of it may stay.
    port.closeFromPage();
    for (let turn = 0; turn < 10; turn += 1) {
      answerHostRequests(context, nextSessionId);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const heapUse = heap.measure();
    console.log(`[fuzz page-edge] ${heap.describe(heapUse)}, once the page left (it had created ${sessionCount} sessions)`);
    expect(heapUse.growth).toBeLessThan(HEAP_GROWTH_LIMIT_BYTES);
  }, 120_000);
});
