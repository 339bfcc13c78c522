import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "@pedelec/core/core-daemon";
import { locateCore } from "@pedelec/core-client/core-location";
import type { CoreRequestFrame } from "@pedelec/protocol/core-wire";
import { isErrorCode } from "@pedelec/protocol/error-codes";
import { EXTENSION_TO_CORE_REQUEST_TYPES, SESSION_REQUEST_TYPES } from "@pedelec/protocol/requests";
import { hostToExtensionMessageSchema, type HostToExtensionMessage } from "@pedelec/protocol/native-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
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
import { flattenStrings, HEAP_GROWTH_LIMIT_BYTES, HeapGrowth } from "@pedelec/protocol/testing/heap-growth";
import { NativeHost } from "./native-host.js";
import { NativeMessagingStdio } from "./native-messaging-stdio.js";

const ORIGIN = "http://127.0.0.1:4000";
const EXTENSION_ORIGIN = "chrome-extension://jipdjobnmfeagcdooiopbbkmbpgbkdhe/";
const SESSION = "00000000-0000-4000-8000-000000000000";
const claim = {
  instanceId: "instance-abcdefghijklmnopqrstu",
  approvalGrantedAt: 1000,
  fullAccessGrantId: "grant-1-abcdefghijklmnopq",
  fullAccessGrantedAt: 1000,
};
/** The only request types the host may pass on to Core. */
const ALLOWED_TYPES: ReadonlySet<string> = new Set([...SESSION_REQUEST_TYPES, ...EXTENSION_TO_CORE_REQUEST_TYPES]);

const request = (id: string, type: string, payload: unknown, extra: Record<string, unknown> = {}) => ({
  kind: "request",
  id,
  type,
  origin: ORIGIN,
  payload,
  ...extra,
});

/** Valid extension frames, including ones the host must refuse because of their type (local requests). */
const templates: Record<string, unknown>[] = [
  request("resume", "resumeSession", { sessionId: SESSION }),
  request("create", "createSession", { provider: "claude" }),
  request("create-full", "createSession", { access: "full" }, { fullAccessClaim: claim }),
  request("send", "sendText", { sessionId: SESSION, turnId: "turn-1", text: "hi" }),
  request("cancel", "cancelTurn", { sessionId: SESSION }),
  request("end", "endSession", { sessionId: SESSION }),
  request("subscribe", "subscribeSession", { sessionId: SESSION }),
  request("subscribe-after", "subscribeSession", { sessionId: SESSION, afterSeq: 7 }),
  request("claim", "claimToolCall", { sessionId: SESSION, toolRequestId: "t-1", claimant: "route-1" }),
  request("release", "releaseToolClaims", { claimant: "route-1" }),
  request("prepare", "prepareSession", { sessionId: SESSION, turnId: "prep-1" }),
  request("providers", "listProviders", {}),
  request("settings", "getSettings", {}),
  request("run", "runWorkspaceScript", { sessionId: SESSION, runId: "run-1", source: "1" }),
  request("run-full", "runWorkspaceScript", { sessionId: SESSION, runId: "run-2", access: "full", source: "1" }, { fullAccessClaim: claim }),
  request("assets", "listAssets", { sessionId: SESSION }),
  request("revoke", "revokeFullAccess", { revokedAt: 5 }),
  request("ping", "ping", {}),
  request("shutdown", "shutdown", {}),
  request("tool", "toolCall", { threadId: SESSION, capability: "c".repeat(32), toolName: "take", argsJson: "{}" }),
  request("attested", "cancelTurn", { sessionId: SESSION }, { attestation: { claims: "x", signature: "y" } }),
];

const extensionMessage: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: mutatedMessage(templates).map((mutated) => mutated.message), weight: 8 },
  { arbitrary: anyJsonValue, weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("request"), id: fc.string({ maxLength: 8 }), type: fc.string(), payload: anyJsonValue }), weight: 1 },
);

let home: string;
let core: RunningCore | undefined;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-fuzz-host-"));
  // No provider CLI anywhere Core looks: a createSession must fail with a code, never start an agent.
  await mkdir(join(home, "no-providers"));
  core = await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: join(home, "no-providers"), PATH: "/usr/bin:/bin" });
});
afterAll(async () => {
  await core?.stop();
  await rm(home, { recursive: true, force: true });
});

describe("extension → native host edge under fuzzing", () => {
  it("answers every message with a usable id once with a code, forwards only allowed types, still serves a valid request, and keeps no memory per message", async () => {
    const settings = fuzzSettings(process.env);
    console.log(`[fuzz native-host-messages] seed=${settings.seed} runs=${settings.runs} (replay with FUZZ_SEED=${settings.seed})`);
    const messages = fc.sample(extensionMessage, { seed: settings.seed, numRuns: settings.runs });
    const forwardedTypes: string[] = [];
    const sendFrame = CoreConnection.prototype.sendFrame;
    const spy = vi.spyOn(CoreConnection.prototype, "sendFrame").mockImplementation(function (this: CoreConnection, frame: CoreRequestFrame) {
      forwardedTypes.push(frame.type);
      return sendFrame.call(this, frame);
    });
    // What the host sent since the last message was answered (kept short, so the test holds no memory per message).
    const received: HostToExtensionMessage[] = [];
    let responseCount = 0;
    const fatal: HostToExtensionMessage[] = [];
    const host = new NativeHost({
      paths: locateCore({ PEDELEC_HOME: home }),
      sendToExtension: (message) => {
        const parsed = hostToExtensionMessageSchema.parse(message);
        if (parsed.kind === "response") responseCount += 1;
        if (parsed.kind === "fatal") fatal.push(parsed);
        received.push(parsed);
      },
      launchCore: async () => undefined,
      coreStartTimeoutMs: 2_000,
      log: () => undefined,
      extensionOrigin: EXTENSION_ORIGIN,
    });
    const responses = () => received.filter((message) => message.kind === "response");
    const waitUntil = async (condition: () => boolean, what: string) => {
      const deadline = performance.now() + 10_000;
      while (!condition()) {
        if (performance.now() > deadline) throw new Error(`${what} (seed ${settings.seed})`);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    host.start();
    await waitUntil(() => received.some((message) => message.kind === "host-status" && message.core === "connected"), "the host never reached Core");

    flattenStrings(messages);
    const heap = new HeapGrowth(messages.length);
    const tally = new OutcomeTally();
    const memoryBefore = process.memoryUsage().rss;
    const started = performance.now();
    let expected = 0;
    try {
      for (const [index, message] of messages.entries()) {
        heap.beforeMessage(index);
        received.length = 0;
        const before = responses().length;
        host.handleMessage(message);
        const id = usableId(message);
        if (id === undefined) continue;
        expected += 1;
        await waitUntil(() => responses().length > before, `message #${index} got no answer: ${JSON.stringify(message).slice(0, 500)}`);
        const response = responses()[before]!;
        expect(response.id, `message #${index} answered under another id`).toBe(id);
        if (response.ok) tally.add("ok");
        else {
          expect(isCodedError(response.error), `message #${index}: uncoded ${JSON.stringify(response.error)}`).toBe(true);
          tally.add(response.error.code);
        }
      }
      expect(responseCount).toBe(expected);
      expect(forwardedTypes.length).toBeGreaterThan(0);
      expect(forwardedTypes.filter((type) => !ALLOWED_TYPES.has(type))).toEqual([]);
      expect(fatal).toEqual([]);

      host.handleMessage(request("after-the-batch", "listProviders", {}));
      await waitUntil(() => responses().some((response) => response.id === "after-the-batch"), "the valid request after the batch got no answer");
      expect(responses().find((response) => response.id === "after-the-batch")).toMatchObject({ ok: true });
    } finally {
      host.stop();
      spy.mockRestore();
    }
    const memoryAfter = process.memoryUsage().rss;
    const heapUse = heap.measure();
    console.log(
      fuzzSummaryLine({
        edge: "native-host-messages",
        sent: messages.length,
        tally,
        seed: settings.seed,
        durationMs: performance.now() - started,
        memoryBefore,
        memoryAfter,
      }),
    );
    console.log(`[fuzz native-host-messages] ${heap.describe(heapUse)}`);
    expect(heapUse.growth).toBeLessThan(HEAP_GROWTH_LIMIT_BYTES);
  }, 120_000);

  it("hands every bad Native Messaging frame to onBadFrame with a code, never throwing, hanging or keeping memory", async () => {
    const settings = fuzzSettings(process.env);
    console.log(`[fuzz native-host-stdio] seed=${settings.seed} runs=${settings.runs} (replay with FUZZ_SEED=${settings.seed})`);
    const lengthPrefixed = (body: Uint8Array, declared = body.length) => {
      const header = Buffer.alloc(4);
      header.writeUInt32LE(declared, 0);
      return Buffer.concat([header, body]);
    };
    const input = fc.oneof(
      rawBytes.map((bytes) => ({ kind: "random", bytes: Buffer.from(bytes), frames: undefined })),
      rawBytes.map((bytes) => ({ kind: "junk-body", bytes: lengthPrefixed(bytes), frames: 1 })),
      anyJsonValue.map((value) => ({ kind: "json-body", bytes: lengthPrefixed(Buffer.from(JSON.stringify(value) ?? "null")), frames: 1 })),
      fc
        .tuple(rawBytes, fc.constantFrom(64 * 1024 * 1024 + 1, 0xffffffff))
        .map(([bytes, declared]) => ({ kind: "too-large", bytes: lengthPrefixed(bytes, declared), frames: 1 })),
    );
    const cases = fc.sample(input, { seed: settings.seed, numRuns: settings.runs });
    const heap = new HeapGrowth(cases.length);
    const tally = new OutcomeTally();
    const memoryBefore = process.memoryUsage().rss;
    const started = performance.now();
    for (const [index, { kind, bytes, frames }] of cases.entries()) {
      heap.beforeMessage(index);
      const stdin = new PassThrough();
      const messages: unknown[] = [];
      const badFrames: unknown[] = [];
      const ended = new Promise<void>((resolve) => {
        const stdio = new NativeMessagingStdio(stdin, new PassThrough());
        stdio.onMessage((message) => void messages.push(message));
        stdio.onClose((error) => {
          if (error !== undefined) badFrames.push(error);
          resolve();
        });
      });
      stdin.end(bytes);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        ended,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`case #${index} (${kind}, seed ${settings.seed}) never ended`)), 5_000);
        }),
      ]).finally(() => clearTimeout(timer));
      for (const error of badFrames) {
        expect(error, `case #${index} (${kind})`).toBeInstanceOf(PedelecError);
        expect(isErrorCode((error as PedelecError).code)).toBe(true);
        tally.add((error as PedelecError).code);
      }
      for (let count = 0; count < messages.length; count += 1) tally.add("message");
      // The decoder stops at the first bad frame, so at most one is reported.
      expect(badFrames.length, `case #${index} (${kind})`).toBeLessThanOrEqual(1);
      if (frames !== undefined) expect(messages.length + badFrames.length, `case #${index} (${kind})`).toBe(frames);
      if (kind === "json-body") expect(badFrames, `case #${index}: valid JSON refused`).toEqual([]);
      if (kind === "too-large") expect((badFrames[0] as PedelecError | undefined)?.code).toBe("MESSAGE_TOO_LARGE");
    }
    console.log(
      fuzzSummaryLine({
        edge: "native-host-stdio",
        sent: cases.length,
        tally,
        seed: settings.seed,
        durationMs: performance.now() - started,
        memoryBefore,
        memoryAfter: process.memoryUsage().rss,
      }),
    );
    const heapUse = heap.measure();
    console.log(`[fuzz native-host-stdio] ${heap.describe(heapUse)}`);
    expect(heapUse.growth).toBeLessThan(HEAP_GROWTH_LIMIT_BYTES);
  }, 120_000);
});
