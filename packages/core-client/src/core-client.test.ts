import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { CoreConnection } from "./core-client.js";
import { callCore } from "./core-call.js";
import { CoreSocketTransport } from "./core-socket-transport.js";

// A stand-in for Core on a real unix socket: the test decides what it answers, including what the real Core never would.
interface FakeCore {
  socketPath: string;
  /** Requests received, in order. */
  requests: { id: string; type: string }[];
  /** Resolves with the next request (or rejects past the deadline). */
  nextRequest(deadlineMs?: number): Promise<{ id: string; type: string }>;
  /** Writes a frame (or raw bytes) to every connected client. */
  send(frame: unknown): void;
  sendBytes(bytes: Buffer): void;
  /** Closes every client connection. */
  dropClients(): void;
}

const PING_RESULT = { version: "0.1.0", pid: 42, home: "/tmp/home", startedAt: "2025-01-01T00:00:00.000Z", sessions: 0 };

let root: string;
let server: Server | undefined;
let dropClients: (() => void) | undefined;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-core-client-"));
});
afterEach(async () => {
  dropClients?.();
  dropClients = undefined;
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  await rm(root, { recursive: true, force: true });
});

async function startFakeCore(): Promise<FakeCore> {
  const socketPath = join(root, "core.sock");
  const clients = new Set<Socket>();
  const requests: { id: string; type: string }[] = [];
  const waiters: (() => void)[] = [];
  server = createServer((socket) => {
    clients.add(socket);
    socket.on("close", () => clients.delete(socket));
    socket.on("error", () => undefined);
    const decoder = new FrameDecoder(1024 * 1024);
    socket.on("data", (chunk: Buffer) => {
      for (const decoded of decoder.push(chunk)) {
        if (!decoded.ok) continue;
        requests.push(decoded.message as { id: string; type: string });
        for (const wake of waiters.splice(0)) wake();
      }
    });
  });
  await new Promise<void>((resolve) => server!.listen(socketPath, resolve));
  dropClients = () => {
    for (const socket of clients) socket.destroy();
  };
  let taken = 0;
  return {
    socketPath,
    requests,
    async nextRequest(deadlineMs = 5_000) {
      const deadline = Date.now() + deadlineMs;
      while (requests.length <= taken) {
        if (Date.now() > deadline) throw new Error("no request reached the fake Core");
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return requests[taken++]!;
    },
    send: (frame) => {
      for (const socket of clients) socket.write(encodeFrame(frame, 64 * 1024 * 1024));
    },
    sendBytes: (bytes) => {
      for (const socket of clients) socket.write(bytes);
    },
    dropClients: () => {
      for (const socket of clients) socket.destroy();
    },
  };
}

function closed(connection: CoreConnection): Promise<PedelecError | undefined> {
  return new Promise((resolve) => connection.onClose(resolve));
}

describe("CoreSocketTransport", () => {
  it("refuses to connect where no Core listens with IPC_UNAVAILABLE and the socket's error code", async () => {
    await expect(CoreSocketTransport.open(join(root, "missing.sock"))).rejects.toMatchObject({
      code: "IPC_UNAVAILABLE",
      details: { cause: "ENOENT" },
    });
  });

  it("gives up connecting when its signal aborts", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(CoreSocketTransport.open(join(root, "missing.sock"), controller.signal)).rejects.toMatchObject({ code: "IPC_UNAVAILABLE" });
  });

  it("closes with MESSAGE_TOO_LARGE when Core declares a frame over 16 MiB", async () => {
    const core = await startFakeCore();
    const transport = await CoreSocketTransport.open(core.socketPath);
    const ended = new Promise<Error | undefined>((resolve) => transport.onClose(resolve));
    // A request first, so the fake Core knows this client by the time it answers.
    transport.send({ kind: "request", id: "first", type: "ping", payload: {} });
    await core.nextRequest();
    const header = Buffer.alloc(4);
    header.writeUInt32LE(17 * 1024 * 1024);
    core.sendBytes(header);
    expect(await ended).toMatchObject({ code: "MESSAGE_TOO_LARGE" });
    expect(() => transport.send({ kind: "request", id: "x", type: "ping", payload: {} })).toThrowError(
      expect.objectContaining({ code: "IPC_UNAVAILABLE" }) as Error,
    );
  });
});

describe("CoreConnection", () => {
  it("resolves a typed request with its checked result and hands other frames to onFrame", async () => {
    const core = await startFakeCore();
    const connection = await CoreConnection.open(core.socketPath);
    const frames: unknown[] = [];
    connection.onFrame((frame) => frames.push(frame));
    const pinged = connection.request("ping", {});
    const request = await core.nextRequest();
    expect(request).toMatchObject({ kind: "request", type: "ping", payload: {} });
    core.send({ kind: "response", id: "someone-else", ok: true, result: 1 });
    core.send({ kind: "response", id: request.id, ok: true, result: PING_RESULT });
    await expect(pinged).resolves.toMatchObject({ pid: 42 });
    expect(frames).toEqual([{ kind: "response", id: "someone-else", ok: true, result: 1 }]);
    connection.close();
  });

  it("fails a request whose result does not match its schema with SDK_PROTOCOL_ERROR and keeps the connection", async () => {
    const core = await startFakeCore();
    const connection = await CoreConnection.open(core.socketPath);
    const bad = connection.request("ping", {});
    core.send({ kind: "response", id: (await core.nextRequest()).id, ok: true, result: { version: 7 } });
    await expect(bad).rejects.toMatchObject({ code: "SDK_PROTOCOL_ERROR", message: "Core answered ping with an invalid result" });
    expect(connection.closed).toBe(false);
    const good = connection.request("ping", {});
    core.send({ kind: "response", id: (await core.nextRequest()).id, ok: true, result: PING_RESULT });
    await expect(good).resolves.toMatchObject({ pid: 42 });
    connection.close();
  });

  it("closes over a frame that does not match the protocol, failing what waits with SDK_PROTOCOL_ERROR", async () => {
    const core = await startFakeCore();
    const connection = await CoreConnection.open(core.socketPath);
    const ended = closed(connection);
    const pending = connection.request("ping", {});
    await core.nextRequest();
    core.send({ kind: "surprise" });
    await expect(pending).rejects.toMatchObject({ code: "SDK_PROTOCOL_ERROR" });
    expect(await ended).toMatchObject({ code: "SDK_PROTOCOL_ERROR" });
    expect(connection.closed).toBe(true);
    await expect(connection.request("ping", {})).rejects.toMatchObject({ code: "SDK_PROTOCOL_ERROR" });
  });

  it("ends with a fatal frame's error at once, and passes the frame on first", async () => {
    const core = await startFakeCore();
    const connection = await CoreConnection.open(core.socketPath);
    const frames: unknown[] = [];
    connection.onFrame((frame) => frames.push(frame));
    const ended = closed(connection);
    const pending = connection.request("ping", {});
    await core.nextRequest();
    core.send({ kind: "fatal", error: { code: "IPC_UNAVAILABLE", message: "too many clients" } });
    await expect(pending).rejects.toMatchObject({ code: "IPC_UNAVAILABLE", message: "too many clients" });
    expect(await ended).toMatchObject({ code: "IPC_UNAVAILABLE", message: "too many clients" });
    expect(frames).toEqual([{ kind: "fatal", error: { code: "IPC_UNAVAILABLE", message: "too many clients" } }]);
  });

  it("fails what waits with IPC_UNAVAILABLE when Core goes away, and refuses raw frames after", async () => {
    const core = await startFakeCore();
    const connection = await CoreConnection.open(core.socketPath);
    const pending = connection.request("ping", {});
    await core.nextRequest();
    core.dropClients();
    await expect(pending).rejects.toMatchObject({ code: "IPC_UNAVAILABLE" });
    expect(connection.closed).toBe(true);
    expect(() => connection.sendFrame({ kind: "request", id: "late", type: "ping", payload: {} })).toThrowError(
      expect.objectContaining({ code: "IPC_UNAVAILABLE" }) as Error,
    );
  });

  it("withdraws a request when its signal aborts; the late answer is only a frame", async () => {
    const core = await startFakeCore();
    const connection = await CoreConnection.open(core.socketPath);
    const frames: unknown[] = [];
    connection.onFrame((frame) => frames.push(frame));
    const controller = new AbortController();
    const pending = connection.request("ping", {}, undefined, controller.signal);
    const request = await core.nextRequest();
    controller.abort(new PedelecError("TURN_CANCELLED", "no longer needed"));
    await expect(pending).rejects.toMatchObject({ code: "TURN_CANCELLED" });
    core.send({ kind: "response", id: request.id, ok: true, result: PING_RESULT });
    await expect.poll(() => frames.length).toBe(1);
    connection.close();
  });
});

describe("callCore", () => {
  it("makes one request on a connection of its own, checks the result with the caller's check, and closes", async () => {
    const core = await startFakeCore();
    const answered = callCore(core.socketPath, {
      type: "toolCall",
      payload: { threadId: "thread-0001", capability: "c".repeat(43), toolName: "add_todo", argsJson: "{}" },
      check: (result) => result as { result: unknown },
    });
    const request = await core.nextRequest();
    expect(request).toMatchObject({ kind: "request", type: "toolCall" });
    core.send({ kind: "response", id: request.id, ok: true, result: { result: { added: true } } });
    await expect(answered).resolves.toEqual({ result: { added: true } });
  });

  it("says IPC_UNAVAILABLE when Core is not running", async () => {
    await expect(callCore(join(root, "missing.sock"), { type: "ping", payload: {}, check: (result) => result })).rejects.toMatchObject({
      code: "IPC_UNAVAILABLE",
    });
  });
});
