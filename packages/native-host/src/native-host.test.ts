import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { locateCore } from "@pedelec/core-client/core-location";
import { startCore, type RunningCore } from "@pedelec/core/core-daemon";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { ChunkAssembler, splittingTransport } from "@pedelec/protocol/chunking";
import {
  hostToExtensionMessageSchema,
  MAX_NATIVE_MESSAGE_BYTES,
  NATIVE_CHUNK_BYTES,
  type HostToExtensionMessage,
} from "@pedelec/protocol/native-wire";
import { NativeHost } from "./native-host.js";
import { NativeMessagingStdio } from "./native-messaging-stdio.js";

const PAGE_ORIGIN = "http://127.0.0.1:4000";
const UNKNOWN_SESSION = "00000000-0000-4000-8000-000000000000";

let home: string;
let core: RunningCore | undefined;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-host-"));
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

const EXTENSION_ORIGIN = "chrome-extension://jipdjobnmfeagcdooiopbbkmbpgbkdhe/";

function hostWith(
  launchCore: () => Promise<void>,
  coreStartTimeoutMs = 5_000,
  extensionOrigin: string | undefined = EXTENSION_ORIGIN,
  coreLaunchedAtStart?: Promise<number | undefined>,
) {
  const received: HostToExtensionMessage[] = [];
  const waiters: (() => void)[] = [];
  const host = new NativeHost({
    paths: locateCore({ PEDELEC_HOME: home }),
    sendToExtension: (message) => {
      received.push(hostToExtensionMessageSchema.parse(message));
      for (const wake of waiters.splice(0)) wake();
    },
    launchCore,
    coreStartTimeoutMs,
    log: () => undefined,
    extensionOrigin,
    coreLaunchedAtStart,
  });
  const waitFor = async (match: (message: HostToExtensionMessage) => boolean, timeoutMs = 8_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = received.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching message; got ${JSON.stringify(received)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  };
  return { host, received, waitFor };
}

describe("NativeHost", () => {
  it("starts Core when it is not running, then forwards requests and answers", async () => {
    let launches = 0;
    const { host, waitFor } = hostWith(async () => {
      launches += 1;
      core = await startCore({ ...process.env, PEDELEC_HOME: home });
    });
    host.start();
    // It says that it started Core, so the page can tell the user.
    expect(await waitFor((message) => message.kind === "host-status" && message.core === "connected")).toMatchObject({ coreLaunched: true });
    host.handleMessage({ kind: "request", id: "r1", type: "resumeSession", origin: PAGE_ORIGIN, payload: { sessionId: UNKNOWN_SESSION } });
    // Core itself answered: the request went through.
    const answer = await waitFor((message) => message.kind === "response" && message.id === "r1");
    expect(answer).toMatchObject({ ok: false, error: { code: "THREAD_NOT_FOUND" } });
    expect(launches).toBe(1);
    host.stop();
  });

  it("waits for the Core its entry started instead of starting another, and starts the next one itself", async () => {
    let launches = 0;
    // The entry's start of Core: still starting when the host first looks, listening a little later.
    const startedByEntry = new Promise<number>((resolve) => setTimeout(() => resolve(4242), 30));
    const listening = startedByEntry.then(async () => {
      core = await startCore({ ...process.env, PEDELEC_HOME: home });
    });
    const { host, waitFor, received } = hostWith(
      async () => {
        launches += 1;
        core = await startCore({ ...process.env, PEDELEC_HOME: home });
      },
      5_000,
      EXTENSION_ORIGIN,
      startedByEntry,
    );
    host.start();
    expect(await waitFor((message) => message.kind === "host-status" && message.core === "connected")).toMatchObject({ coreLaunched: true });
    await listening;
    expect(launches).toBe(0);
    // That Core stops: the host's next connection starts one itself.
    await core?.stop();
    await waitFor((message) => message.kind === "host-status" && message.core === "unavailable");
    received.length = 0;
    host.handleMessage({ kind: "request", id: "r1", type: "resumeSession", origin: PAGE_ORIGIN, payload: { sessionId: UNKNOWN_SESSION } });
    expect(await waitFor((message) => message.kind === "response" && message.id === "r1")).toMatchObject({ error: { code: "THREAD_NOT_FOUND" } });
    expect(launches).toBe(1);
    host.stop();
  });

  it("answers CORE_RUNTIME_UNAVAILABLE when Core does not come up in time", async () => {
    const { host, waitFor } = hostWith(async () => undefined, 200);
    host.start();
    expect(await waitFor((message) => message.kind === "host-status" && message.core === "unavailable")).toMatchObject({ coreLaunched: true });
    host.handleMessage({ kind: "request", id: "r2", type: "resumeSession", origin: PAGE_ORIGIN, payload: { sessionId: UNKNOWN_SESSION } });
    const answer = await waitFor((message) => message.kind === "response" && message.id === "r2");
    expect(answer).toMatchObject({ ok: false, error: { code: "CORE_RUNTIME_UNAVAILABLE" } });
    host.stop();
  });

  it("answers an invalid message that has an id with INVALID_INPUT", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home });
    const { host, waitFor } = hostWith(async () => undefined);
    host.start();
    host.handleMessage({ kind: "request", id: "bad", type: "resumeSession", origin: PAGE_ORIGIN, payload: {}, extra: true });
    expect(await waitFor((message) => message.kind === "response" && message.id === "bad")).toMatchObject({
      ok: false,
      error: { code: "INVALID_INPUT" },
    });
    host.stop();
  });

  it("forwards only what a page may ask: local-only requests never reach Core", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home });
    const { host, received, waitFor } = hostWith(async () => undefined);
    host.start();
    // Core was running already: the host only connected to it.
    expect(await waitFor((message) => message.kind === "host-status" && message.core === "connected")).toMatchObject({ coreLaunched: false });
    const localOnly = [
      { type: "runScript", payload: { threadId: UNKNOWN_SESSION, capability: "c".repeat(43), entry: "x.ts" } },
      { type: "shutdown", payload: {} },
      { type: "ping", payload: {} },
      { type: "toolSpec", payload: { threadId: UNKNOWN_SESSION, capability: "c".repeat(43), toolName: "x" } },
      { type: "toolCall", payload: { threadId: UNKNOWN_SESSION, capability: "c".repeat(43), toolName: "x", argsJson: "{}" } },
    ];
    for (const [index, request] of localOnly.entries()) {
      host.handleMessage({ kind: "request", id: `local-${index}`, ...request });
      host.handleMessage({ kind: "request", id: `stamped-${index}`, origin: PAGE_ORIGIN, ...request });
    }
    // A page request without the origin the extension always stamps is refused too.
    host.handleMessage({ kind: "request", id: "unstamped", type: "resumeSession", payload: { sessionId: UNKNOWN_SESSION } });
    for (const id of [...localOnly.flatMap((_, index) => [`local-${index}`, `stamped-${index}`]), "unstamped"]) {
      expect(await waitFor((message) => message.kind === "response" && message.id === id)).toMatchObject({
        ok: false,
        error: { code: "INVALID_INPUT" },
      });
    }
    // Core is still up and was never asked to stop.
    expect(received.some((message) => message.kind === "host-status" && message.core === "unavailable")).toBe(false);
    const connection = await CoreConnection.open(locateCore({ PEDELEC_HOME: home }).socketPath);
    await expect(connection.request("ping", {})).resolves.toMatchObject({ home });
    connection.close();
    host.stop();
  });

  it("reports Core going away and answers later requests with CORE_RUNTIME_UNAVAILABLE", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: join(home, "none") });
    const { host, waitFor } = hostWith(async () => undefined, 200);
    host.start();
    await waitFor((message) => message.kind === "host-status" && message.core === "connected");
    await core.stop();
    await waitFor((message) => message.kind === "host-status" && message.core === "unavailable");
    core = undefined;
    host.handleMessage({ kind: "request", id: "r4", type: "resumeSession", origin: PAGE_ORIGIN, payload: { sessionId: UNKNOWN_SESSION } });
    expect(await waitFor((message) => message.kind === "response" && message.id === "r4")).toMatchObject({
      ok: false,
      error: { code: "CORE_RUNTIME_UNAVAILABLE" },
    });
    host.stop();
  });
});

describe("NativeMessagingStdio", () => {
  it("reads Chrome's frames and writes frames under 1 MiB, chunking a large message", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const incoming: unknown[] = [];
    let chunkIds = 0;
    const stdio = splittingTransport(new NativeMessagingStdio(input, output), {
      maxBytes: NATIVE_CHUNK_BYTES,
      createChunkId: () => `c${++chunkIds}`,
    });
    stdio.onMessage((message) => incoming.push(message));
    input.write(encodeFrame({ kind: "request", id: "a", type: "ping", payload: {} }, 1024));
    await new Promise((resolve) => setImmediate(resolve));
    expect(incoming).toEqual([{ kind: "request", id: "a", type: "ping", payload: {} }]);

    const written: Buffer[] = [];
    output.on("data", (chunk: Buffer) => written.push(chunk));
    const bigText = "ünïcødé ".repeat(400_000);
    stdio.send({ kind: "response", id: "big", ok: true, result: { text: bigText } });
    const decoder = new FrameDecoder(MAX_NATIVE_MESSAGE_BYTES);
    const assembler = new ChunkAssembler(64 * 1024 * 1024);
    let whole: unknown;
    let frames = 0;
    for (const decoded of decoder.push(Buffer.concat(written))) {
      expect(decoded.ok).toBe(true);
      if (!decoded.ok) continue;
      frames += 1;
      const message = hostToExtensionMessageSchema.parse(decoded.message);
      if (message.kind === "chunk") whole = assembler.add(message) ?? whole;
    }
    expect(frames).toBeGreaterThan(3);
    expect(whole).toEqual({ kind: "response", id: "big", ok: true, result: { text: bigText } });
  });

  it("closes with MESSAGE_TOO_LARGE over an oversized frame from the browser, as soon as its header arrives", async () => {
    const input = new PassThrough();
    const closed = new Promise<Error | undefined>((resolve) => new NativeMessagingStdio(input, new PassThrough()).onClose(resolve));
    const header = Buffer.alloc(4);
    header.writeUInt32LE(65 * 1024 * 1024, 0);
    input.write(header);
    expect(await closed).toMatchObject({ name: "PedelecError", code: "MESSAGE_TOO_LARGE" });
  });

  it("closes without an error when stdin ends, and refuses to send after that", async () => {
    const input = new PassThrough();
    const stdio = new NativeMessagingStdio(input, new PassThrough());
    const closed = new Promise<Error | undefined>((resolve) => stdio.onClose(resolve));
    input.end();
    expect(await closed).toBeUndefined();
    expect(() => stdio.send("{}")).toThrowError(expect.objectContaining({ code: "NATIVE_CONNECTION_CLOSED" }) as Error);
  });

  it("refuses a single frame over Chrome's 1 MiB limit with MESSAGE_TOO_LARGE and stays open", () => {
    const stdio = new NativeMessagingStdio(new PassThrough(), new PassThrough());
    expect(() => stdio.send(JSON.stringify({ text: "x".repeat(MAX_NATIVE_MESSAGE_BYTES) }))).toThrowError(
      expect.objectContaining({ code: "MESSAGE_TOO_LARGE" }) as Error,
    );
    expect(() => stdio.send("{}")).not.toThrow();
  });
});

describe("limits on what the host receives", () => {
  it("answers a payload nested too deep, or full of unknown keys, with a short INVALID_INPUT", async () => {
    const { host, waitFor } = hostWith(async () => undefined);
    let deep: unknown = 1;
    for (let level = 0; level < 8_000; level += 1) deep = { a: deep };
    host.handleMessage({ kind: "request", id: "deep", type: "resumeSession", origin: PAGE_ORIGIN, payload: deep });
    const keys = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`unknown_${index}`, index]));
    host.handleMessage({ kind: "request", id: "keys", type: "resumeSession", origin: PAGE_ORIGIN, payload: {}, ...keys });
    for (const id of ["deep", "keys"]) {
      const answer = await waitFor((message) => message.kind === "response" && message.id === id);
      expect(answer).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
      expect(JSON.stringify(answer).length).toBeLessThan(4096);
    }
    host.stop();
  });
});

describe("NativeMessagingStdio reading large messages", () => {
  /** Time from the first byte written to the message handed over, fed in 64 KiB pieces as a pipe delivers them. */
  async function readMilliseconds(bytes: number): Promise<number> {
    const input = new PassThrough({ highWaterMark: 64 * 1024 });
    let delivered: (() => void) | undefined;
    const done = new Promise<void>((resolve) => (delivered = resolve));
    const stdio = new NativeMessagingStdio(input, new PassThrough());
    stdio.onMessage(() => delivered?.());
    stdio.onClose((error) => {
      if (error !== undefined) throw error;
    });
    const frame = encodeFrame({ kind: "request", id: "big", type: "sendText", payload: { text: "x".repeat(bytes - 100) } }, 64 * 1024 * 1024);
    const started = performance.now();
    for (let offset = 0; offset < frame.length; offset += 64 * 1024) {
      if (!input.write(frame.subarray(offset, offset + 64 * 1024))) await new Promise((resolve) => input.once("drain", resolve));
    }
    await done;
    return performance.now() - started;
  }

  it("reads a 60 MiB message in time linear in its size (against 4 MiB)", async () => {
    const small = Math.min(await readMilliseconds(4 * 1024 * 1024), await readMilliseconds(4 * 1024 * 1024));
    const large = await readMilliseconds(60 * 1024 * 1024);
    // Linear is about 15; copying everything held on each piece made 60 MiB take half a minute.
    expect(large / Math.max(small, 1)).toBeLessThan(40);
  });
});

describe("Full Access admissions", () => {
  const claim = {
    instanceId: "instance-abcdefghijklmnop",
    approvalGrantedAt: Date.now() - 60_000,
    fullAccessGrantId: "grant-abcdefghijklmnopq",
    fullAccessGrantedAt: Date.now() - 30_000,
  };
  // A provider that cannot be found: admission happens before Core looks for it, so the error tells which step failed.
  const fullSession = { provider: "codex", access: "full" };
  const env = { ...process.env, PEDELEC_PROVIDER_PATH: "/nonexistent", PATH: "/nonexistent" };

  it("attests a request the extension forwards with a Full Access claim, and Core admits it", async () => {
    core = await startCore({ ...env, PEDELEC_HOME: home });
    const { host, waitFor } = hostWith(async () => undefined);
    host.start();
    host.handleMessage({
      kind: "request",
      id: "with-claim",
      type: "createSession",
      origin: PAGE_ORIGIN,
      payload: fullSession,
      fullAccessClaim: claim,
    });
    host.handleMessage({ kind: "request", id: "without-claim", type: "createSession", origin: PAGE_ORIGIN, payload: fullSession });
    const admitted = await waitFor((message) => message.kind === "response" && message.id === "with-claim");
    expect(admitted).toMatchObject({ ok: false, error: { code: "PROVIDER_UNAVAILABLE" } });
    expect(await waitFor((message) => message.kind === "response" && message.id === "without-claim")).toMatchObject({
      ok: false,
      error: { code: "FULL_ACCESS_NOT_GRANTED" },
    });
    host.stop();
  });

  it("refuses to attest when Chrome did not name the extension, or Core's key is missing", async () => {
    core = await startCore({ ...env, PEDELEC_HOME: home });
    // Chrome passes the caller as the first argument; anything else is not an extension.
    const anonymous = hostWith(async () => undefined, 5_000, "--parent-window=0");
    anonymous.host.start();
    anonymous.host.handleMessage({
      kind: "request",
      id: "anonymous",
      type: "createSession",
      origin: PAGE_ORIGIN,
      payload: fullSession,
      fullAccessClaim: claim,
    });
    expect(await anonymous.waitFor((message) => message.kind === "response" && message.id === "anonymous")).toMatchObject({
      ok: false,
      error: { code: "FULL_ACCESS_ATTESTATION_INVALID", message: expect.stringContaining("not started by a browser extension") },
    });
    anonymous.host.stop();

    await rm(join(home, "keys"), { recursive: true, force: true });
    const keyless = hostWith(async () => undefined);
    keyless.host.start();
    keyless.host.handleMessage({
      kind: "request",
      id: "keyless",
      type: "createSession",
      origin: PAGE_ORIGIN,
      payload: fullSession,
      fullAccessClaim: claim,
    });
    expect(await keyless.waitFor((message) => message.kind === "response" && message.id === "keyless")).toMatchObject({
      ok: false,
      error: { code: "FULL_ACCESS_ATTESTATION_INVALID", message: expect.stringContaining("cannot be read") },
    });
    keyless.host.stop();
  });

  it("refuses an extension frame that carries its own attestation", async () => {
    core = await startCore({ ...env, PEDELEC_HOME: home });
    const { host, waitFor } = hostWith(async () => undefined);
    host.start();
    host.handleMessage({
      kind: "request",
      id: "self-attested",
      type: "createSession",
      origin: PAGE_ORIGIN,
      payload: fullSession,
      attestation: { claims: "{}", signature: "A".repeat(43) },
    });
    expect(await waitFor((message) => message.kind === "response" && message.id === "self-attested")).toMatchObject({
      ok: false,
      error: { code: "INVALID_INPUT" },
    });
    host.stop();
  });
});
