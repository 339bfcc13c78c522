import { describe, expect, it } from "vitest";
import { splitIntoChunks } from "@pedelec/protocol/chunking";
import { extensionToHostMessageSchema } from "@pedelec/protocol/native-wire";
import { NativeLink } from "./native-link.js";
import { FakeNativeHost, eventEnvelope } from "./testing/fakes.js";

function setup() {
  const host = new FakeNativeHost();
  const warnings: string[] = [];
  let ids = 0;
  const link = new NativeLink({
    connect: host.connect,
    createRequestId: () => `native-${++ids}`,
    logger: { warn: (code) => warnings.push(code) },
  });
  return { host, link, warnings };
}

const sessionRef = { sessionId: "session-aaaa" };

describe("NativeLink", () => {
  it("opens on first need, sends a request frame with the origin, and resolves with the result", async () => {
    const { host, link } = setup();
    expect(link.state).toBe("closed");
    const result = link.request("endSession", "https://app.example", sessionRef);
    expect(link.state).toBe("connecting");
    expect(host.current.sent).toEqual([{ kind: "request", id: "native-1", type: "endSession", origin: "https://app.example", payload: sessionRef }]);
    host.current.hello();
    expect(link.state).toBe("open");
    host.current.respond(host.current.sent[0]!, { ended: true });
    await expect(result).resolves.toEqual({ ended: true });
    expect(host.channels).toHaveLength(1);
  });

  it("turns an error response into a PedelecError with Core's code", async () => {
    const { host, link } = setup();
    const result = link.request("endSession", "https://app.example", sessionRef);
    host.current.fail(host.current.sent[0]!, "THREAD_NOT_FOUND", "no such session");
    await expect(result).rejects.toMatchObject({ name: "PedelecError", code: "THREAD_NOT_FOUND", message: "no such session" });
  });

  it("fails pending requests with NATIVE_HOST_UNAVAILABLE when the host dies before saying anything", async () => {
    for (const lastError of [
      "Specified native messaging host not found.",
      "Access to the specified native messaging host is forbidden.",
      "Native host has exited.",
      "Error when communicating with the native messaging host.",
    ]) {
      const { host, link } = setup();
      const result = link.request("endSession", "https://app.example", sessionRef);
      host.current.die(lastError);
      await expect(result).rejects.toMatchObject({ code: "NATIVE_HOST_UNAVAILABLE", details: { lastError } });
      expect(link.state).toBe("closed");
    }
  });

  it("fails pending requests with NATIVE_CONNECTION_CLOSED when the host dies after it spoke", async () => {
    const { host, link } = setup();
    const result = link.request("endSession", "https://app.example", sessionRef);
    host.current.hello();
    host.current.die("Native host has exited.");
    await expect(result).rejects.toMatchObject({ code: "NATIVE_CONNECTION_CLOSED" });
    expect(link.appConnected).toBe(false);
  });

  it("reopens on the next request and tells reopen listeners before sending it", async () => {
    const { host, link } = setup();
    const order: string[] = [];
    link.onReopen(() => {
      order.push("reopen");
      void link.request("subscribeSession", "https://app.example", sessionRef).catch(() => undefined);
    });
    const first = link.request("endSession", "https://app.example", sessionRef);
    host.current.die("Native host has exited.");
    await expect(first).rejects.toBeDefined();
    expect(order).toEqual([]);
    void link.request("cancelTurn", "https://app.example", sessionRef);
    expect(host.channels).toHaveLength(2);
    expect(order).toEqual(["reopen"]);
    expect(host.current.sent.map((frame) => frame.type)).toEqual(["subscribeSession", "cancelTurn"]);
  });

  it("reassembles chunked responses and events", async () => {
    const { host, link } = setup();
    const events: unknown[] = [];
    link.onEvent((envelope) => events.push(envelope));
    const result = link.request("sendText", "https://app.example", { sessionId: "session-aaaa", turnId: "t1", text: "hi" });
    host.current.hello();
    const big = `${"x".repeat(5000)}"quotes" and \\ backslashes`;
    const responseFrames = splitIntoChunks({ kind: "response", id: "native-1", ok: true, result: { big } }, 1024, "c1");
    expect(responseFrames.length).toBeGreaterThan(2);
    for (const frame of responseFrames.reverse()) host.current.emit(JSON.parse(frame));
    await expect(result).resolves.toEqual({ big });

    const envelope = eventEnvelope("session-aaaa", 1, { type: "chat-completed", turnId: "t1", messageId: "m1", text: big });
    for (const frame of splitIntoChunks({ kind: "event", envelope }, 1024, "c2")) host.current.emit(JSON.parse(frame));
    expect(events).toEqual([envelope]);
  });

  it("drops inconsistent chunks with a warning and keeps working", async () => {
    const { host, link, warnings } = setup();
    const result = link.request("endSession", "https://app.example", sessionRef);
    host.current.emit({ kind: "chunk", chunkId: "c1", index: 0, count: 2, data: "{" });
    host.current.emit({ kind: "chunk", chunkId: "c1", index: 0, count: 2, data: "{" });
    expect(warnings).toEqual(["SDK_PROTOCOL_ERROR"]);
    host.current.respond(host.current.sent[0]!, { ended: true });
    await expect(result).resolves.toEqual({ ended: true });
  });

  it("fails pending requests on a fatal frame", async () => {
    const { host, link } = setup();
    const result = link.request("endSession", "https://app.example", sessionRef);
    host.current.emit({ kind: "fatal", error: { code: "MESSAGE_TOO_LARGE", message: "frame too large" } });
    await expect(result).rejects.toMatchObject({ code: "MESSAGE_TOO_LARGE" });
  });

  it("fails pending requests when the host reports Core unavailable with an error", async () => {
    const { host, link } = setup();
    const result = link.request("endSession", "https://app.example", sessionRef);
    host.current.emit({
      kind: "host-status",
      version: "0.1.0",
      core: "unavailable",
      error: { code: "CORE_RUNTIME_UNAVAILABLE", message: "Core did not start" },
    });
    await expect(result).rejects.toMatchObject({ code: "CORE_RUNTIME_UNAVAILABLE" });
    expect(link.appConnected).toBe(false);
    host.current.hello("connected");
    expect(link.appConnected).toBe(true);
  });

  it("answers a malformed response with SDK_PROTOCOL_ERROR and ignores other garbage", async () => {
    const { host, link, warnings } = setup();
    const result = link.request("endSession", "https://app.example", sessionRef);
    host.current.emit("not a frame");
    host.current.emit({ kind: "response", id: "native-1", ok: "yes" });
    await expect(result).rejects.toMatchObject({ code: "SDK_PROTOCOL_ERROR" });
    expect(warnings).toEqual(["SDK_PROTOCOL_ERROR"]);
  });

  it("gives every request its own id and withdraws an aborted one", async () => {
    const { host, link } = setup();
    const controller = new AbortController();
    const aborted = link.request("endSession", "https://app.example", sessionRef, controller.signal);
    const kept = link.request("endSession", "https://app.example", sessionRef);
    const [first, second] = host.current.sent;
    expect(first!.id).not.toBe(second!.id);
    controller.abort(new Error("page left"));
    await expect(aborted).rejects.toMatchObject({ code: "SDK_TRANSPORT_ERROR" });
    host.current.respond(first!, { ended: true });
    host.current.respond(second!, { ended: false });
    await expect(kept).resolves.toEqual({ ended: false });
  });

  it("reports a post on a dead connection as a failure of that request, not a throw", async () => {
    const { host, link } = setup();
    void link.request("endSession", "https://app.example", sessionRef).catch(() => undefined);
    host.current.closed = true; // Chrome has not reported the disconnect yet.
    await expect(link.request("cancelTurn", "https://app.example", sessionRef)).rejects.toMatchObject({
      code: "NATIVE_HOST_UNAVAILABLE",
    });
    expect(link.state).toBe("closed");
  });

  it("probe waits until the host settles Core's state, and stops at the deadline", async () => {
    const { host, link } = setup();
    const probing = link.probe(5000);
    host.current.hello("connecting");
    host.current.hello("connected");
    await probing;
    expect(link.appConnected).toBe(true);

    const silent = setup();
    const started = Date.now();
    await silent.link.probe(30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(silent.link.appConnected).toBe(false);
  });

  it("close fails pending requests and the next request opens a new connection", async () => {
    const { host, link } = setup();
    const pending = link.request("endSession", "https://app.example", sessionRef);
    link.close();
    await expect(pending).rejects.toMatchObject({ code: "NATIVE_CONNECTION_CLOSED" });
    expect(host.current.disconnectedByExtension).toBe(true);
    void link.request("endSession", "https://app.example", sessionRef).catch(() => undefined);
    expect(host.channels).toHaveLength(2);
  });

  it("puts a Full Access claim on the frame only when one is given, and sends the extension's own requests", async () => {
    const { host, link } = setup();
    const claim = {
      instanceId: "instance-abcdefghijklmnopqrstu",
      approvalGrantedAt: 1000,
      fullAccessGrantId: "grant-abcdefghijklmnopqrstu",
      fullAccessGrantedAt: 2000,
    };
    void link.request("createSession", "https://app.example", { access: "full" }, undefined, claim);
    void link.request("createSession", "https://app.example", { access: "sandbox" });
    void link.request("revokeFullAccess", "https://app.example", { revokedAt: 3000 });
    const [full, sandbox, revocation] = host.current.sent;
    expect(full).toEqual({
      kind: "request",
      id: "native-1",
      type: "createSession",
      origin: "https://app.example",
      payload: { access: "full" },
      fullAccessClaim: claim,
    });
    expect(sandbox).not.toHaveProperty("fullAccessClaim");
    expect(revocation).toEqual({
      kind: "request",
      id: "native-3",
      type: "revokeFullAccess",
      origin: "https://app.example",
      payload: { revokedAt: 3000 },
    });
    // Each frame is one the native host accepts.
    for (const frame of host.current.sent) expect(extensionToHostMessageSchema.safeParse(frame).success).toBe(true);
  });
});
