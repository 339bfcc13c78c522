import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_TOOL_ARGS_JSON_LENGTH } from "@pedelec/protocol/requests";
import {
  anyJsonValue,
  fuzzSettings,
  fuzzString,
  fuzzSummaryLine,
  isCodedError,
  mutatedMessage,
  nonsenseId,
  OutcomeTally,
} from "@pedelec/protocol/testing/fuzz-values";
import { flattenStrings, HEAP_GROWTH_LIMIT_BYTES, HeapGrowth } from "@pedelec/protocol/testing/heap-growth";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "./core-daemon.js";
import { capabilityOfHangingAgent } from "./testing/agent-capability.js";
import { RawCoreSocket } from "./testing/raw-core-socket.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const tools = [
  {
    name: "take",
    description: "Takes an object",
    argsSchema: { type: "object" as const, properties: { anything: { type: "object" as const } } },
    timeoutMs: 60_000,
  },
];

let home: string;
let core: RunningCore | undefined;
let page: CoreConnection | undefined;
let threadId = "";
let capability = "";

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-fuzz-agent-"));
  core = await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: standInDir, CLAUDE_CONFIG_DIR: join(home, "claude-state") });
  page = await CoreConnection.open(core.paths.socketPath);
  // The page answers every tool call at once, so a valid call never waits for its 60 s timeout.
  page.onFrame((frame) => {
    if (frame.kind !== "event" || frame.envelope.event.type !== "tool-call-requested") return;
    const { toolRequestId } = frame.envelope.event;
    void page!.request(
      "submitToolResult",
      { sessionId: frame.envelope.sessionId, toolRequestId, outcome: { ok: true, result: { taken: true } } },
      ORIGIN,
    );
  });
  const session = await page.request("createSession", { provider: "claude", skills: { guidance: "", tools } }, ORIGIN);
  threadId = session.sessionId;
  await page.request("sendText", { sessionId: threadId, turnId: "turn-1", text: "hang" }, ORIGIN);
  capability = await capabilityOfHangingAgent(session.workspace.path);
}, 30_000);
afterAll(async () => {
  page?.close();
  await core?.stop();
  await rm(home, { recursive: true, force: true });
});

/** The agent's requests, valid for the hanging turn; a run names an entry that does not exist, so nothing is run. */
function templates(): Record<string, unknown>[] {
  return [
    { type: "toolList", payload: { threadId, capability } },
    { type: "toolSpec", payload: { threadId, capability, toolName: "take" } },
    { type: "toolSpec", payload: { threadId, capability, toolName: "missing_tool" } },
    { type: "toolCall", payload: { threadId, capability, toolName: "take", argsJson: '{"anything":{"a":1}}' } },
    { type: "toolCall", payload: { threadId, capability, toolName: "take", argsJson: "[1,2" } },
    { type: "toolCall", payload: { threadId, capability, toolName: "nope", argsJson: "{}" } },
    { type: "runScript", payload: { threadId, capability, entry: "no-such-script.ts", timeoutMs: 1_000 } },
  ];
}

/** One agent request: a mutated template, a random capability or thread id, random args text, or any JSON payload. */
function agentRequest(): fc.Arbitrary<{ type: unknown; payload: unknown }> {
  const types = fc.constantFrom("toolList", "toolSpec", "toolCall", "runScript");
  // A mutation of the whole request leaves no envelope; it becomes a toolCall's payload instead.
  const asRequest = (value: unknown) =>
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as { type: unknown; payload: unknown })
      : { type: "toolCall", payload: value };
  return fc.oneof(
    { arbitrary: mutatedMessage(templates()).map((mutated) => asRequest(mutated.message)), weight: 8 },
    {
      arbitrary: fc.record({
        type: types,
        payload: fc.record({
          threadId: fc.oneof(fc.constant(threadId), nonsenseId, fuzzString),
          capability: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{16,64}$/), fuzzString, fc.constant(`${capability.slice(0, -1)}A`)),
          toolName: fc.constantFrom("take", "missing_tool"),
          argsJson: fc.constant("{}"),
        }),
      }),
      weight: 3,
    },
    {
      arbitrary: fc.record({
        type: fc.constant("toolCall"),
        payload: fc.record({
          threadId: fc.constant(threadId),
          capability: fc.constant(capability),
          toolName: fc.constant("take"),
          argsJson: fc.oneof(
            fuzzString,
            anyJsonValue.map((value) => JSON.stringify({ anything: value })),
          ),
        }),
      }),
      weight: 3,
    },
    { arbitrary: fc.record({ type: types, payload: anyJsonValue }), weight: 1 },
  );
}

describe("agent CLI → Core edge under fuzzing", () => {
  it("answers mutated tool and script requests with coded errors only, still answers ping, and keeps no memory per request", async () => {
    const settings = fuzzSettings(process.env);
    console.log(`[fuzz agent-requests] seed=${settings.seed} runs=${settings.runs} (replay with FUZZ_SEED=${settings.seed})`);
    const requests = fc.sample(agentRequest(), { seed: settings.seed, numRuns: settings.runs });
    // Arguments just over and far over the limit, kept few: each is megabytes on the wire.
    const oversized = "x".repeat(MAX_TOOL_ARGS_JSON_LENGTH + 1);
    requests.push({ type: "toolCall", payload: { threadId, capability, toolName: "take", argsJson: oversized } });
    requests.push({
      type: "toolCall",
      payload: { threadId, capability, toolName: "take", argsJson: `{"anything":"${"y".repeat(MAX_TOOL_ARGS_JSON_LENGTH)}"}` },
    });
    flattenStrings(requests);
    const heap = new HeapGrowth(requests.length);
    const agent = await RawCoreSocket.open(core!.paths.socketPath);
    const tally = new OutcomeTally();
    const memoryBefore = process.memoryUsage().rss;
    const started = performance.now();
    try {
      for (const [index, request] of requests.entries()) {
        heap.beforeMessage(index);
        const id = `agent-${index}`;
        const context = `request #${index} (seed ${settings.seed}): ${JSON.stringify(request).slice(0, 300)}`;
        await agent.writeFrame({ kind: "request", id, type: request.type, payload: request.payload });
        const answer = await agent
          .nextFrame((frame) => frame.kind === "response" && frame.id === id, 15_000)
          .catch((error: unknown) => {
            throw new Error(`${context}: ${(error as Error).message}`);
          });
        const frame = answer.frame;
        if (frame.kind !== "response") throw new Error(`${context}: not a response`);
        if (frame.ok) tally.add("ok");
        else {
          expect(isCodedError(frame.error), `${context}: uncoded ${JSON.stringify(frame.error)}`).toBe(true);
          tally.add(frame.error.code);
        }
        // What the wire says about the thread must never leak it to the wrong capability.
        const payload = request.payload as { threadId?: unknown; capability?: unknown } | null;
        if (frame.ok && request.type !== "ping") {
          expect(payload?.threadId, context).toBe(threadId);
          expect(payload?.capability, context).toBe(capability);
        }
        agent.received.length = 0;
      }
      await agent.writeFrame({ kind: "request", id: "after-the-batch", type: "ping", payload: {} });
      const pong = await agent.nextFrame((frame) => frame.kind === "response" && frame.id === "after-the-batch");
      expect(pong.frame).toMatchObject({ ok: true, result: { pid: process.pid } });
      expect(agent.isClosed).toBe(false);
    } finally {
      agent.destroy();
    }
    const heapUse = heap.measure();
    console.log(
      fuzzSummaryLine({
        edge: "agent-requests",
        sent: requests.length,
        tally,
        seed: settings.seed,
        durationMs: performance.now() - started,
        memoryBefore,
        memoryAfter: process.memoryUsage().rss,
      }),
    );
    console.log(`[fuzz agent-requests] ${heap.describe(heapUse)}`);
    expect(heapUse.growth).toBeLessThan(HEAP_GROWTH_LIMIT_BYTES);
  }, 120_000);
});
