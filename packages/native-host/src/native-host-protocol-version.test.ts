import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { locateCore } from "@pedelec/core-client/core-location";
import { startFakeCoreSocket, type FakeCoreSocket } from "@pedelec/core-client/testing/fake-core-socket";
import { hostToExtensionMessageSchema, type HostToExtensionMessage } from "@pedelec/protocol/native-wire";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import { NativeHost } from "./native-host.js";

let home: string;
let fake: FakeCoreSocket | undefined;
const received: HostToExtensionMessage[] = [];

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-host-version-"));
  received.length = 0;
});
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await rm(home, { recursive: true, force: true });
});

/** A Core of protocol `coreVersion` at this home's socket: answers hello, and nothing else. */
async function startCoreSpeaking(coreVersion: string): Promise<void> {
  const socketPath = locateCore({ PEDELEC_HOME: home }).socketPath;
  await mkdir(dirname(socketPath), { recursive: true });
  fake = await startFakeCoreSocket(socketPath, (request) =>
    request.type === "hello" ? { ok: true, result: { protocolVersion: coreVersion } } : undefined,
  );
}

async function waitFor(match: (message: HostToExtensionMessage) => boolean, timeoutMs = 5_000): Promise<HostToExtensionMessage> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = received.find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no matching message; got ${JSON.stringify(received)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function startHost(): NativeHost {
  const host = new NativeHost({
    paths: locateCore({ PEDELEC_HOME: home }),
    sendToExtension: (message) => void received.push(hostToExtensionMessageSchema.parse(message)),
    launchCore: () => Promise.reject(new Error("a Core is already running")),
    coreStartTimeoutMs: 1_000,
    log: () => undefined,
    extensionOrigin: undefined,
  });
  host.start();
  return host;
}

describe("the native host's side of the protocol version handshake", () => {
  it("states its protocol version in its first host-status", async () => {
    await startCoreSpeaking(PROTOCOL_VERSION);
    const host = startHost();
    expect(received[0]).toMatchObject({ kind: "host-status", protocolVersion: PROTOCOL_VERSION, core: "connecting" });
    await waitFor((message) => message.kind === "host-status" && message.core === "connected");
    host.stop();
  });

  it("reports a Core of another major as unavailable with PROTOCOL_VERSION_MISMATCH, and fails what it forwarded", async () => {
    await startCoreSpeaking("2.0");
    const host = startHost();
    host.handleMessage({ kind: "request", id: "r1", type: "listProviders", origin: "https://app.example", payload: {} });
    const status = await waitFor((message) => message.kind === "host-status" && message.core === "unavailable");
    expect(status).toMatchObject({
      error: { code: "PROTOCOL_VERSION_MISMATCH", details: { part: "native-host", expected: "2.0", actual: PROTOCOL_VERSION } },
    });
    expect(await waitFor((message) => message.kind === "response" && message.id === "r1")).toMatchObject({
      ok: false,
      error: { code: "PROTOCOL_VERSION_MISMATCH" },
    });
    host.stop();
  });
});
