import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import { CoreConnection } from "./core-client.js";
import { startFakeCoreSocket, type FakeCoreRequest, type FakeCoreSocket } from "./testing/fake-core-socket.js";

let root: string;
let fake: FakeCoreSocket | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-core-hello-"));
});
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await rm(root, { recursive: true, force: true });
});

/** A Core on a real socket that answers hello with `coreVersion` and ping with a ping result; records every request. */
async function startCoreSpeaking(coreVersion: string | "unknown-request"): Promise<{ socketPath: string; requests: FakeCoreRequest[] }> {
  const socketPath = join(root, "core.sock");
  fake = await startFakeCoreSocket(socketPath, (request) =>
    request.type !== "hello"
      ? { ok: true, result: { version: "0.1.0", pid: 42, home: "/tmp/home", startedAt: "2025-01-01T00:00:00.000Z", sessions: 0 } }
      : coreVersion === "unknown-request"
        ? { ok: false, error: { code: "INVALID_INPUT", message: 'unknown request type "hello"' } }
        : { ok: true, result: { protocolVersion: coreVersion } },
  );
  return { socketPath, requests: fake.requests };
}

function closedWith(connection: CoreConnection): Promise<PedelecError | undefined> {
  return new Promise((resolve) => connection.onClose(resolve));
}

describe("CoreConnection's hello", () => {
  it("states the part and version first, and goes on with a compatible Core", async () => {
    const core = await startCoreSpeaking("1.4");
    const connection = await CoreConnection.open(core.socketPath, undefined, { part: "native-host" });
    await expect(connection.request("ping", {})).resolves.toMatchObject({ pid: 42 });
    expect(core.requests[0]).toMatchObject({ type: "hello", payload: { protocolVersion: PROTOCOL_VERSION, part: "native-host" } });
    expect(connection.closed).toBe(false);
    connection.close();
  });

  it("closes at once with PROTOCOL_VERSION_MISMATCH when Core answers a newer major, naming itself as the part to update", async () => {
    const core = await startCoreSpeaking("2.1");
    const connection = await CoreConnection.open(core.socketPath, undefined, { part: "native-host" });
    const closed = closedWith(connection);
    const error = await closed;
    expect(error).toBeInstanceOf(PedelecError);
    expect(error).toMatchObject({ code: "PROTOCOL_VERSION_MISMATCH", details: { part: "native-host", expected: "2.1", actual: PROTOCOL_VERSION } });
    await expect(connection.request("ping", {})).rejects.toMatchObject({ code: "PROTOCOL_VERSION_MISMATCH" });
  });

  it("names Core when Core's major is older", async () => {
    const core = await startCoreSpeaking("0.9");
    const connection = await CoreConnection.open(core.socketPath, undefined, { part: "native-host" });
    expect(await closedWith(connection)).toMatchObject({
      code: "PROTOCOL_VERSION_MISMATCH",
      details: { part: "core", expected: PROTOCOL_VERSION, actual: "0.9" },
    });
  });

  it("is served as before by a Core that does not know hello", async () => {
    const core = await startCoreSpeaking("unknown-request");
    const connection = await CoreConnection.open(core.socketPath, undefined, { part: "native-host" });
    await expect(connection.request("ping", {})).resolves.toMatchObject({ pid: 42 });
    expect(connection.closed).toBe(false);
    connection.close();
  });

  it("says nothing without a part", async () => {
    const core = await startCoreSpeaking("2.0");
    const connection = await CoreConnection.open(core.socketPath);
    await connection.request("ping", {});
    expect(core.requests.map((request) => request.type)).toEqual(["ping"]);
    connection.close();
  });
});
