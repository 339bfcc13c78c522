import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { startCore, type RunningCore } from "@pedelec/core/core-daemon";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { ChunkAssembler } from "@pedelec/protocol/chunking";
import { hostToExtensionMessageSchema, MAX_NATIVE_MESSAGE_BYTES, type HostToExtensionMessage } from "@pedelec/protocol/native-wire";
import { NativeHost } from "./native-host.js";
import { NativeMessagingStdio } from "./native-messaging-stdio.js";

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

function hostWith(launchCore: () => Promise<void>, coreStartTimeoutMs = 5_000) {
  const received: HostToExtensionMessage[] = [];
  const waiters: (() => void)[] = [];
  const host = new NativeHost({
    paths: resolveCorePaths({ PEDELEC_HOME: home }),
    sendToExtension: (message) => {
      received.push(hostToExtensionMessageSchema.parse(message));
      for (const wake of waiters.splice(0)) wake();
    },
    launchCore,
    coreStartTimeoutMs,
    log: () => undefined,
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
    await waitFor((message) => message.kind === "host-status" && message.core === "connected");
    host.handleMessage({ kind: "request", id: "r1", type: "ping", payload: {} });
    const answer = await waitFor((message) => message.kind === "response" && message.id === "r1");
    expect(answer).toMatchObject({ ok: true, result: { home } });
    expect(launches).toBe(1);
    host.stop();
  });

  it("answers CORE_RUNTIME_UNAVAILABLE when Core does not come up in time", async () => {
    const { host, waitFor } = hostWith(async () => undefined, 200);
    host.start();
    await waitFor((message) => message.kind === "host-status" && message.core === "unavailable");
    host.handleMessage({ kind: "request", id: "r2", type: "ping", payload: {} });
    const answer = await waitFor((message) => message.kind === "response" && message.id === "r2");
    expect(answer).toMatchObject({ ok: false, error: { code: "CORE_RUNTIME_UNAVAILABLE" } });
    host.stop();
  });

  it("answers an invalid message that has an id with INVALID_INPUT", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home });
    const { host, waitFor } = hostWith(async () => undefined);
    host.start();
    host.handleMessage({ kind: "request", id: "bad", type: "ping" , payload: {}, extra: true });
    expect(await waitFor((message) => message.kind === "response" && message.id === "bad")).toMatchObject({
      ok: false,
      error: { code: "INVALID_INPUT" },
    });
    host.stop();
  });

  it("reports Core going away and answers later requests with CORE_RUNTIME_UNAVAILABLE", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: join(home, "none") });
    const { host, waitFor } = hostWith(async () => undefined, 200);
    host.start();
    await waitFor((message) => message.kind === "host-status" && message.core === "connected");
    host.handleMessage({ kind: "request", id: "r3", type: "shutdown", payload: {} });
    await waitFor((message) => message.kind === "host-status" && message.core === "unavailable");
    core = undefined;
    host.handleMessage({ kind: "request", id: "r4", type: "ping", payload: {} });
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
    const stdio = new NativeMessagingStdio(input, output, {
      onMessage: (message) => incoming.push(message),
      onBadFrame: () => undefined,
      onEnd: () => undefined,
    });
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

  it("reports an oversized frame from the browser", async () => {
    const input = new PassThrough();
    const errors: string[] = [];
    new NativeMessagingStdio(input, new PassThrough(), {
      onMessage: () => undefined,
      onBadFrame: (error) => errors.push(error.code),
      onEnd: () => undefined,
    });
    const header = Buffer.alloc(4);
    header.writeUInt32LE(65 * 1024 * 1024, 0);
    input.write(header);
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual(["MESSAGE_TOO_LARGE"]);
  });
});
