import { afterEach, describe, expect, it, vi } from "vitest";
import { SDK_PORT_NAME } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { Bridge } from "./bridge.js";
import { ABSENT_EXTENSION_ERROR, FakeExtension, NO_REPLY, TEST_ORIGIN } from "./testing/fake-extension.js";

const EXTENSION_ID = "abcdefghijklmnopabcdefghijklmnop";

function errorOf(promise: Promise<unknown>): Promise<PedelecError> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(PedelecError);
      return error as PedelecError;
    },
  );
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("Bridge", () => {
  it("connects at once with the SDK port name and matches answers to requests", async () => {
    const extension = new FakeExtension().install();
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 1_000 });
    expect(extension.connections).toEqual([{ extensionId: EXTENSION_ID, name: SDK_PORT_NAME }]);
    extension.handle("cancelTurn", async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { cancelled: (request.payload as { sessionId: string }).sessionId === "session-slow" };
    });
    const slow = bridge.request("cancelTurn", { sessionId: "session-slow" });
    const fast = bridge.request("getApprovalStatus", {});
    await expect(fast).resolves.toEqual({
      result: { installed: true, approved: true, origin: TEST_ORIGIN, appConnected: true, appLaunched: false },
      generation: 1,
    });
    await expect(slow).resolves.toEqual({ result: { cancelled: true }, generation: 1 });
    const ids = extension.requests.map((request) => request.id);
    expect(new Set(ids).size).toBe(2);
  });

  it("rejects with the wire error's code", async () => {
    const extension = new FakeExtension().install();
    extension.handle("resumeSession", () => {
      throw new PedelecError("THREAD_ACCESS_DENIED", "another origin's session", { origin: "https://other.example" });
    });
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 1_000 });
    const error = await errorOf(bridge.request("resumeSession", { sessionId: "session-0001" }));
    expect(error.code).toBe("THREAD_ACCESS_DENIED");
    expect(error.details).toEqual({ origin: "https://other.example" });
  });

  it("is unavailable outside a browser page, without throwing at construction", async () => {
    vi.stubGlobal("chrome", { runtime: new FakeExtension().runtime }); // chrome present, but no window
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 1_000 });
    expect((await errorOf(bridge.request("getApprovalStatus", {}))).code).toBe("EXTENSION_UNAVAILABLE");
  });

  it("is unavailable when chrome.runtime.connect is missing or throws", async () => {
    vi.stubGlobal("window", globalThis);
    vi.stubGlobal("chrome", { runtime: {} });
    const missing = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 1_000 });
    expect((await errorOf(missing.request("getApprovalStatus", {}))).code).toBe("EXTENSION_UNAVAILABLE");
    vi.stubGlobal("chrome", {
      runtime: {
        connect: () => {
          throw new Error("Invalid extension id");
        },
      },
    });
    const throwing = new Bridge({ extensionId: "bad", timeoutMs: 1_000 });
    expect((await errorOf(throwing.request("getApprovalStatus", {}))).code).toBe("EXTENSION_UNAVAILABLE");
  });

  it("maps Chrome's 'receiving end does not exist' disconnect to EXTENSION_UNAVAILABLE", async () => {
    const extension = new FakeExtension().install();
    extension.absent = true;
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 5_000 });
    const error = await errorOf(bridge.request("getApprovalStatus", {}));
    expect(error.code).toBe("EXTENSION_UNAVAILABLE");
    expect(error.details).toEqual({ reason: ABSENT_EXTENSION_ERROR });
  });

  it("rejects pending requests with EXTENSION_DISCONNECTED when a working port dies, then reconnects", async () => {
    const extension = new FakeExtension().install();
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 5_000 });
    await bridge.request("getApprovalStatus", {});
    const disconnects: Array<[number, string]> = [];
    bridge.onDisconnect((generation, error) => disconnects.push([generation, error.code]));
    extension.handle("cancelTurn", () => NO_REPLY);
    const pending = bridge.request("cancelTurn", { sessionId: "session-0001" });
    await extension.waitForRequest("cancelTurn");
    extension.dropPort();
    expect((await errorOf(pending)).code).toBe("EXTENSION_DISCONNECTED");
    expect(disconnects).toEqual([[1, "EXTENSION_DISCONNECTED"]]);
    expect(bridge.liveGeneration).toBeUndefined();
    await expect(bridge.request("getApprovalStatus", {})).resolves.toMatchObject({ generation: 2 });
    expect(extension.connections).toHaveLength(2);
  });

  it("treats a throwing postMessage as a lost port", async () => {
    const extension = new FakeExtension().install();
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 5_000 });
    extension.port!.connected = false; // Chrome closed it without telling the page yet
    expect((await errorOf(bridge.request("getApprovalStatus", {}))).code).toBe("EXTENSION_DISCONNECTED");
    await expect(bridge.request("getApprovalStatus", {})).resolves.toMatchObject({ generation: 2 });
  });

  it("times out with SDK_BRIDGE_TIMEOUT and drops the late answer", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const extension = new FakeExtension().install();
    extension.handle("getApprovalStatus", () => NO_REPLY);
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 100 });
    const pending = errorOf(bridge.request("getApprovalStatus", {}));
    const request = await extension.waitForRequest("getApprovalStatus");
    await vi.advanceTimersByTimeAsync(99);
    let settled = false;
    void pending.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).code).toBe("SDK_BRIDGE_TIMEOUT");
    const protocolErrors: PedelecError[] = [];
    bridge.onProtocolError((error) => protocolErrors.push(error));
    extension.send({
      id: request.id,
      ok: true,
      result: { installed: true, approved: true, origin: TEST_ORIGIN, appConnected: true, appLaunched: false },
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(protocolErrors).toEqual([]);
  });

  it("applies a request's own deadline instead of the bridge timeout, and the bridge timeout to the others", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const extension = new FakeExtension().install();
    extension.handle("cancelTurn", () => NO_REPLY);
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 100 });
    expect(bridge.timeoutMs).toBe(100);
    const outcomes: Record<string, string> = {};
    const track = (name: string, request: Promise<unknown>) =>
      void request.then(
        () => (outcomes[name] = "resolved"),
        (error: PedelecError) => (outcomes[name] = `${error.code}: ${error.message}`),
      );
    track("long", bridge.request("cancelTurn", { sessionId: "session-long" }, { timeoutMs: 500 }));
    track("ordinary", bridge.request("cancelTurn", { sessionId: "session-ordinary" }));
    await extension.waitForRequest("cancelTurn", 1);
    await vi.advanceTimersByTimeAsync(100);
    expect(outcomes).toEqual({ ordinary: "SDK_BRIDGE_TIMEOUT: The extension did not answer cancelTurn within 100 ms" });
    await vi.advanceTimersByTimeAsync(399);
    expect(outcomes.long).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(outcomes.long).toBe("SDK_BRIDGE_TIMEOUT: The extension did not answer cancelTurn within 500 ms");
  });

  it("pauses the timeout while the user is asked for approval and restarts it once settled", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const extension = new FakeExtension().install();
    extension.handle("createSession", () => NO_REPLY);
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 100 });
    let outcome: string | undefined;
    const pending = bridge.request("createSession", {}).then(
      () => (outcome = "resolved"),
      (error: PedelecError) => (outcome = error.code),
    );
    const request = await extension.waitForRequest("createSession");
    await vi.advanceTimersByTimeAsync(60);
    extension.send({ type: "request-progress", id: request.id, stage: "awaiting-approval" });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(outcome).toBeUndefined();
    extension.send({ type: "request-progress", id: request.id, stage: "approval-settled" });
    await vi.advanceTimersByTimeAsync(99);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await pending;
    expect(outcome).toBe("SDK_BRIDGE_TIMEOUT");
  });

  it("checks payloads before sending: INVALID_INPUT with zod issues, no round trip", async () => {
    const extension = new FakeExtension().install();
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 1_000 });
    const error = await errorOf(bridge.request("sendText", { sessionId: "session-0001", turnId: "t1", text: "" }));
    expect(error.code).toBe("INVALID_INPUT");
    expect((error.details as { issues: Array<{ path: unknown[] }> }).issues[0]?.path).toEqual(["text"]);
    expect((await errorOf(bridge.requestAnyType("someFutureRequest", { run: () => 1 }))).code).toBe("INVALID_INPUT");
    expect((await errorOf(bridge.requestAnyType("", {}))).code).toBe("INVALID_INPUT");
    await Promise.resolve();
    expect(extension.requests).toEqual([]);
  });

  it("passes unknown request types through the escape hatch", async () => {
    const extension = new FakeExtension().install();
    extension.handle("someFutureRequest", (request) => ({ echoed: request.payload }));
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 1_000 });
    await expect(bridge.requestAnyType("someFutureRequest", { a: [1] })).resolves.toMatchObject({ result: { echoed: { a: [1] } } });
  });

  it("rejects a request whose result does not match its schema with SDK_PROTOCOL_ERROR", async () => {
    const extension = new FakeExtension().install();
    extension.handle("endSession", () => ({ ended: "yes" }));
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 1_000 });
    expect((await errorOf(bridge.request("endSession", { sessionId: "session-0001" }))).code).toBe("SDK_PROTOCOL_ERROR");
  });

  it("rejects the matching request when its answer is malformed, and reports other invalid messages", async () => {
    const extension = new FakeExtension().install();
    extension.handle("endSession", () => NO_REPLY);
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 1_000 });
    const reported: Array<[string, string | undefined]> = [];
    bridge.onProtocolError((error, sessionId) => reported.push([error.code, sessionId]));
    const pending = errorOf(bridge.request("endSession", { sessionId: "session-0001" }));
    const request = await extension.waitForRequest("endSession");
    extension.send({ id: request.id, ok: false, error: { code: "NOT_A_CATALOGUE_CODE", message: "?" } });
    expect((await pending).code).toBe("SDK_PROTOCOL_ERROR");
    extension.send({ type: "event", sessionId: "session-0001", seq: 0, emittedAt: "x", event: { type: "nope" } });
    extension.send("garbage");
    await vi.waitFor(() =>
      expect(reported).toEqual([
        ["SDK_PROTOCOL_ERROR", "session-0001"],
        ["SDK_PROTOCOL_ERROR", undefined],
      ]),
    );
  });

  it("hands valid session events to its listeners", async () => {
    const extension = new FakeExtension().install();
    const bridge = new Bridge({ extensionId: EXTENSION_ID, timeoutMs: 1_000 });
    const seen: number[] = [];
    bridge.onEvent((envelope) => seen.push(envelope.seq));
    extension.emit("session-0001", { type: "session-ended", reason: "requested" });
    extension.emit("session-0001", { type: "status-changed", status: "idle" });
    await vi.waitFor(() => expect(seen).toEqual([1, 2]));
  });
});
