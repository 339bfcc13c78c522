import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { encodeFrame } from "@pedelec/protocol/frame-codec";
import type { CoreServerFrame } from "@pedelec/protocol/core-wire";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import { startCore, type RunningCore } from "./core-daemon.js";
import { RawCoreSocket } from "./testing/raw-core-socket.js";

let home: string;
let core: RunningCore | undefined;
const closers: (() => void)[] = [];

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-hello-"));
  core = await startCore({ ...process.env, PEDELEC_HOME: home });
});
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

async function openRaw(): Promise<RawCoreSocket> {
  const socket = await RawCoreSocket.open(core!.paths.socketPath);
  closers.push(() => socket.destroy());
  return socket;
}

const responseTo = (id: string) => (frame: CoreServerFrame) => frame.kind === "response" && frame.id === id;
const hello = (id: string, protocolVersion: string) => ({ kind: "request", id, type: "hello", payload: { protocolVersion, part: "native-host" } });
const ping = (id: string) => ({ kind: "request", id, type: "ping", payload: {} });

describe("Core's side of the protocol version handshake", () => {
  it("answers a compatible hello with its own version and serves the connection on", async () => {
    const raw = await openRaw();
    await raw.writeFrame(hello("h1", "1.7"));
    expect((await raw.nextFrame(responseTo("h1"))).frame).toEqual({
      kind: "response",
      id: "h1",
      ok: true,
      result: { protocolVersion: PROTOCOL_VERSION },
    });
    await raw.writeFrame(ping("p1"));
    expect((await raw.nextFrame(responseTo("p1"))).frame).toMatchObject({ ok: true });
  });

  it("refuses a newer client's major at once, naming Core as the part to update, and serves nothing it sent after", async () => {
    const raw = await openRaw();
    // The hello and a request in one write: Core must not serve the request.
    await raw.write(Buffer.concat([encodeFrame(hello("h1", "2.0"), 1024), encodeFrame(ping("p1"), 1024)]));
    const answer = (await raw.nextFrame(responseTo("h1"))).frame;
    expect(answer).toMatchObject({
      ok: false,
      error: { code: "PROTOCOL_VERSION_MISMATCH", details: { part: "core", expected: "2.0", actual: PROTOCOL_VERSION } },
    });
    expect((await raw.nextFrame((frame) => frame.kind === "fatal")).frame).toMatchObject({ error: { code: "PROTOCOL_VERSION_MISMATCH" } });
    await raw.closedWithin(5_000);
    expect(raw.received.some((received) => received.frame.kind === "response" && received.frame.id === "p1")).toBe(false);
  });

  it("names the client as the part to update when its major is older", async () => {
    const raw = await openRaw();
    await raw.writeFrame(hello("h1", "0.3"));
    expect((await raw.nextFrame(responseTo("h1"))).frame).toMatchObject({
      ok: false,
      error: { code: "PROTOCOL_VERSION_MISMATCH", details: { part: "native-host", expected: PROTOCOL_VERSION, actual: "0.3" } },
    });
    await raw.closedWithin(5_000);
  });

  it("answers a malformed hello with INVALID_INPUT and keeps the connection", async () => {
    const raw = await openRaw();
    await raw.writeFrame({ kind: "request", id: "h1", type: "hello", payload: { protocolVersion: "1.0", part: "browser" } });
    expect((await raw.nextFrame(responseTo("h1"))).frame).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    await raw.writeFrame(ping("p1"));
    expect((await raw.nextFrame(responseTo("p1"))).frame).toMatchObject({ ok: true });
  });

  it("lets a CoreConnection that says hello use Core as before", async () => {
    const connection = await CoreConnection.open(core!.paths.socketPath, undefined, { part: "native-host" });
    closers.push(() => connection.close());
    await expect(connection.request("ping", {})).resolves.toMatchObject({ pid: process.pid });
    expect(connection.closed).toBe(false);
  });
});
