import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CORE_FRAME_BYTES, type CoreServerFrame } from "@pedelec/protocol/core-wire";
import { FrameDecoder } from "@pedelec/protocol/frame-codec";
import {
  anyJsonValue,
  fuzzSettings,
  fuzzSummaryLine,
  isCodedError,
  usableId,
  mutatedMessage,
  OutcomeTally,
  rawBytes,
} from "@pedelec/protocol/testing/fuzz-values";
import { startCore, type RunningCore } from "./core-daemon.js";
import { flattenStrings, HEAP_GROWTH_LIMIT_BYTES, HeapGrowth } from "@pedelec/protocol/testing/heap-growth";
import { RawCoreSocket } from "./testing/raw-core-socket.js";

const ORIGIN = "http://127.0.0.1:4000";
const SESSION = "00000000-0000-4000-8000-000000000000";
const attestation = { claims: "eyJ2ZXJzaW9uIjoxfQ", signature: "A".repeat(43) };

const frame = (id: string, type: string, payload: unknown, extra: Record<string, unknown> = {}) => ({ kind: "request", id, type, payload, ...extra });

/**
 * Valid request frames as the native host and local programs send them, with and without origin and attestation.
 * `shutdown` is left out: a valid one would rightly stop the Core under test.
 */
const templates: Record<string, unknown>[] = [
  frame("ping", "ping", {}),
  frame("ping-from-page", "ping", {}, { origin: ORIGIN }),
  frame("resume", "resumeSession", { sessionId: SESSION }, { origin: ORIGIN }),
  frame("resume-local", "resumeSession", { sessionId: SESSION }),
  frame("resume-after", "resumeSession", { sessionId: SESSION, afterSeq: 3 }, { origin: ORIGIN }),
  frame("subscribe", "subscribeSession", { sessionId: SESSION, afterSeq: 0 }, { origin: ORIGIN }),
  frame("prepare", "prepareSession", { sessionId: SESSION, turnId: "prep-1" }, { origin: ORIGIN }),
  frame("claim", "claimToolCall", { sessionId: SESSION, toolRequestId: "t-1", claimant: "route-1" }, { origin: ORIGIN }),
  frame("release", "releaseToolClaims", { claimant: "route-1" }, { origin: ORIGIN }),
  frame("create", "createSession", { provider: "claude" }, { origin: ORIGIN }),
  frame("create-full", "createSession", { access: "full" }, { origin: ORIGIN, attestation }),
  frame("send", "sendText", { sessionId: SESSION, turnId: "turn-1", text: "hi" }, { origin: ORIGIN }),
  frame("submit", "submitToolResult", { sessionId: SESSION, toolRequestId: "t-1", outcome: { ok: true, result: 1 } }, { origin: ORIGIN }),
  frame("cancel", "cancelTurn", { sessionId: SESSION }, { origin: ORIGIN }),
  frame("end", "endSession", { sessionId: SESSION }, { origin: ORIGIN }),
  frame("end-left", "endSession", { sessionId: SESSION, reason: "disconnected" }, { origin: ORIGIN }),
  frame("providers", "listProviders", {}, { origin: ORIGIN }),
  frame("run-full", "runWorkspaceScript", { sessionId: SESSION, runId: "run-1", access: "full", source: "1" }, { origin: ORIGIN, attestation }),
  frame("upload", "prepareAssetUpload", { sessionId: SESSION, path: "/a.txt", sizeBytes: 1 }, { origin: ORIGIN }),
  frame("revoke", "revokeFullAccess", { revokedAt: 1 }, { origin: ORIGIN }),
  frame("spec", "toolSpec", { threadId: SESSION, capability: "c".repeat(32), toolName: "take" }),
  frame("call", "toolCall", { threadId: SESSION, capability: "c".repeat(32), toolName: "take", argsJson: "{}" }, { origin: ORIGIN }),
];

type Case = { kind: "frame"; message: unknown } | { kind: "random" | "junk-body" | "json-body" | "too-large"; bytes: Buffer };

function lengthPrefixed(body: Uint8Array, declared = body.length): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32LE(declared, 0);
  return Buffer.concat([header, body]);
}

const coreCase: fc.Arbitrary<Case> = fc.oneof(
  { arbitrary: mutatedMessage(templates).map((mutated): Case => ({ kind: "frame", message: mutated.message })), weight: 12 },
  { arbitrary: anyJsonValue.map((message): Case => ({ kind: "frame", message })), weight: 2 },
  { arbitrary: rawBytes.map((bytes): Case => ({ kind: "random", bytes: Buffer.from(bytes) })), weight: 1 },
  { arbitrary: rawBytes.map((bytes): Case => ({ kind: "junk-body", bytes: lengthPrefixed(bytes) })), weight: 1 },
  {
    arbitrary: anyJsonValue.map((value): Case => ({ kind: "json-body", bytes: lengthPrefixed(Buffer.from(JSON.stringify(value) ?? "null")) })),
    weight: 1,
  },
  {
    arbitrary: fc
      .constantFrom(MAX_CORE_FRAME_BYTES + 1, 0xffffffff)
      .map((declared): Case => ({ kind: "too-large", bytes: lengthPrefixed(Buffer.alloc(0), declared) })),
    weight: 1,
  },
);

let home: string;
let core: RunningCore | undefined;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-fuzz-core-"));
  await mkdir(join(home, "no-providers"));
  core = await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: join(home, "no-providers"), PATH: "/usr/bin:/bin" });
});
afterAll(async () => {
  await core?.stop();
  await rm(home, { recursive: true, force: true });
});

function record(tally: OutcomeTally, received: CoreServerFrame, context: string): void {
  if (received.kind === "response" && received.ok) {
    tally.add("ok");
    return;
  }
  const error = received.kind === "response" && !received.ok ? received.error : received.kind === "fatal" ? received.error : undefined;
  expect(received.kind === "response" || received.kind === "fatal", `${context}: unexpected ${received.kind} frame`).toBe(true);
  expect(isCodedError(error), `${context}: uncoded ${JSON.stringify(error)}`).toBe(true);
  tally.add(received.kind === "fatal" ? `fatal:${error!.code}` : error!.code);
}

describe("native host → Core edge under fuzzing", () => {
  it("answers hostile frames and bytes with coded errors or a fatal frame, keeps running, and keeps no memory per frame", async () => {
    const settings = fuzzSettings(process.env);
    console.log(`[fuzz core-socket] seed=${settings.seed} runs=${settings.runs} (replay with FUZZ_SEED=${settings.seed})`);
    const cases = fc.sample(coreCase, { seed: settings.seed, numRuns: settings.runs });
    flattenStrings(cases);
    const heap = new HeapGrowth(cases.length);
    const socketPath = core!.paths.socketPath;
    const memoryBefore = process.memoryUsage().rss;
    const started = performance.now();
    const tally = new OutcomeTally();
    let framesSocket = await RawCoreSocket.open(socketPath);

    for (const [index, item] of cases.entries()) {
      heap.beforeMessage(index);
      const context = `case #${index} (${item.kind}, seed ${settings.seed})`;
      if (item.kind === "frame") {
        const before = framesSocket.received.length;
        await framesSocket.writeJson(JSON.stringify(item.message) ?? "null");
        const id = usableId(item.message);
        // A frame without a usable id cannot be answered: Core must send a fatal frame and close.
        await framesSocket
          .nextFrame(() => framesSocket.received.length > before, 10_000)
          .catch((error: unknown) => {
            throw new Error(`${context}: ${(error as Error).message}; sent ${JSON.stringify(item.message).slice(0, 300)}`);
          });
        const answer = framesSocket.received[before]!.frame;
        record(tally, answer, context);
        if (id !== undefined) {
          expect(answer, context).toMatchObject({ kind: "response", id });
        } else {
          expect(answer.kind, context).toBe("fatal");
          await framesSocket.closedWithin(5_000);
          framesSocket = await RawCoreSocket.open(socketPath);
        }
        continue;
      }
      // Raw bytes travel on a fresh connection; what Core should do follows from decoding them the same way.
      const socket = await RawCoreSocket.open(socketPath);
      try {
        const decoder = new FrameDecoder(MAX_CORE_FRAME_BYTES);
        const decoded = decoder.push(item.bytes);
        await socket.write(item.bytes);
        const broken = decoded.some((frame) => !frame.ok) || decoded.some((frame) => frame.ok && usableId(frame.message) === undefined);
        const answerable = decoded.filter((frame) => frame.ok && usableId(frame.message) !== undefined).length;
        if (broken) {
          const fatal = await socket.nextFrame((received) => received.kind === "fatal", 10_000);
          record(tally, fatal.frame, context);
          await socket.closedWithin(5_000);
        } else if (answerable > 0) {
          await socket.nextFrame(() => socket.received.length >= answerable, 10_000);
        }
        for (const received of socket.received) if (received.frame.kind !== "fatal") record(tally, received.frame, context);
        if (item.kind === "too-large")
          expect(socket.received.at(-1)?.frame, context).toMatchObject({ kind: "fatal", error: { code: "MESSAGE_TOO_LARGE" } });
      } finally {
        socket.destroy();
      }
    }
    framesSocket.destroy();

    const fresh = await RawCoreSocket.open(socketPath);
    await fresh.writeFrame({ kind: "request", id: "after-the-batch", type: "ping", payload: {} });
    const pong = await fresh.nextFrame((received) => received.kind === "response" && received.id === "after-the-batch");
    expect(pong.frame).toMatchObject({ ok: true, result: { pid: process.pid } });
    fresh.destroy();

    const memoryAfter = process.memoryUsage().rss;
    const heapUse = heap.measure();
    console.log(
      fuzzSummaryLine({
        edge: "core-socket",
        sent: cases.length,
        tally,
        seed: settings.seed,
        durationMs: performance.now() - started,
        memoryBefore,
        memoryAfter,
      }),
    );
    console.log(`[fuzz core-socket] ${heap.describe(heapUse)}`);
    expect(heapUse.growth).toBeLessThan(HEAP_GROWTH_LIMIT_BYTES);
  }, 120_000);
});
