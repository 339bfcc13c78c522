import { afterEach, describe, expect, it, vi } from "vitest";
import type { PageRequest } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { Pedelec } from "./pedelec.js";
import { errorOf } from "./testing/error-of.js";
import { FakeExtension, NO_REPLY, sessionInfo } from "./testing/fake-extension.js";
import type { PedelecEventContext } from "./types.js";

const SESSION_ID = "session-0001";

async function openSession() {
  const extension = new FakeExtension().install();
  const session = await new Pedelec().createSession({ provider: "claude" });
  return { extension, session };
}

function turnIdOf(request: PageRequest): string {
  return (request.payload as { turnId: string }).turnId;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("PedelecSession turns", () => {
  it("sends a turn, streams deltas in order, reports the message and resolves on turn-completed", async () => {
    const { extension, session } = await openSession();
    const log: string[] = [];
    const contexts: PedelecEventContext[] = [];
    session.onStatus((status, context) => log.push(`status:${status}:${context.source}`));
    session.onChatDelta((delta, context) => {
      log.push(`delta:${delta}`);
      contexts.push(context);
    });
    session.onChat((message) => log.push(`chat:${message.messageId}:${message.text}`));
    const sending = session.sendText("Hello");
    // The status is Core's to tell: nothing changes before Core says so.
    expect(session.getStatus()).toBe("idle");
    const request = await extension.waitForRequest("sendText");
    const turnId = turnIdOf(request);
    expect(request.payload).toEqual({ sessionId: SESSION_ID, turnId, text: "Hello" });
    expect(turnId).toMatch(/^[A-Za-z0-9_-]{1,128}$/);
    extension.emit(SESSION_ID, { type: "turn-started", turnId, turnKind: "user" });
    extension.emit(SESSION_ID, { type: "status-changed", status: "running", turnId });
    for (const delta of ["Hel", "lo ", "there"]) {
      extension.emit(SESSION_ID, { type: "chat-delta", turnId, messageId: "m1", delta });
    }
    extension.emit(SESSION_ID, { type: "chat-completed", turnId, messageId: "m1", text: "Hello there" });
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    extension.emit(SESSION_ID, { type: "status-changed", status: "idle", turnId });
    await expect(sending).resolves.toBeUndefined();
    await vi.waitFor(() => expect(log.at(-1)).toBe("status:idle:core"));
    expect(log).toEqual(["status:running:core", "delta:Hel", "delta:lo ", "delta:there", "chat:m1:Hello there", "status:idle:core"]);
    expect(contexts[0]).toMatchObject({
      sessionId: SESSION_ID,
      provider: "claude",
      source: "core",
      turnId,
      turnKind: "user",
      messageId: "m1",
      seq: 3,
    });
    expect(typeof contexts[0]?.eventEmittedAt).toBe("string");
    expect(session.getStatus()).toBe("idle");
  });

  it("rejects sendText with the code of turn-failed, reports it through onError and shows Core's error status", async () => {
    const { extension, session } = await openSession();
    const reported: string[] = [];
    session.onError((error) => reported.push(error.code));
    const sending = session.sendText("Hello");
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    extension.emit(SESSION_ID, { type: "status-changed", status: "running", turnId });
    extension.emit(SESSION_ID, {
      type: "turn-failed",
      turnId,
      turnKind: "user",
      error: { code: "PROVIDER_NOT_AUTHENTICATED", message: "Sign in to claude" },
    });
    extension.emit(SESSION_ID, { type: "status-changed", status: "error", turnId });
    const error = await errorOf(sending);
    expect(error.code).toBe("PROVIDER_NOT_AUTHENTICATED");
    expect(error.message).toBe("Sign in to claude");
    expect(reported).toEqual(["PROVIDER_NOT_AUTHENTICATED"]);
    await vi.waitFor(() => expect(session.getStatus()).toBe("error"));
  });

  it("fails the active turn when the extension says the runtime link broke, and ignores other sessions' notices", async () => {
    const { extension, session } = await openSession();
    const reported: string[] = [];
    session.onError((error) => reported.push(error.code));
    const statuses: Array<[string, string]> = [];
    session.onStatus((status, context) => statuses.push([status, context.source]));
    const sending = session.sendText("Hello");
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    extension.emit(SESSION_ID, { type: "status-changed", status: "running", turnId });
    const lost = { code: "CORE_RUNTIME_UNAVAILABLE", message: "the connection to Pedelec Core closed" };
    extension.send({ type: "session-interrupted", sessionId: "session-9999", error: lost });
    extension.send({ type: "session-interrupted", sessionId: SESSION_ID, error: lost });
    expect((await errorOf(sending)).code).toBe("CORE_RUNTIME_UNAVAILABLE");
    expect(reported).toEqual(["CORE_RUNTIME_UNAVAILABLE"]);
    // Core cannot speak over the broken link, so this status is the SDK's own.
    expect(statuses).toEqual([
      ["running", "core"],
      ["error", "sdk"],
    ]);
  });

  it("rejects sendText when Core refuses it, without inventing a status", async () => {
    const { extension, session } = await openSession();
    extension.handle("sendText", () => {
      throw new PedelecError("SESSION_BUSY", "busy in another tab");
    });
    const statuses: string[] = [];
    session.onStatus((status) => statuses.push(status));
    expect((await errorOf(session.sendText("Hello"))).code).toBe("SESSION_BUSY");
    expect(statuses).toEqual([]);
    expect(session.getStatus()).toBe("idle");
    // The refused turn left nothing behind: the next message goes out.
    extension.handle("sendText", (request) => ({ turnId: turnIdOf(request) }));
    const next = session.sendText("again");
    const turnId = turnIdOf(await extension.waitForRequest("sendText", 1));
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    await expect(next).resolves.toBeUndefined();
  });

  it("rejects a second sendText with SESSION_BUSY locally while a turn is active", async () => {
    const { extension, session } = await openSession();
    const first = session.sendText("one");
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    expect((await errorOf(session.sendText("two"))).code).toBe("SESSION_BUSY");
    expect(extension.requestsOf("sendText")).toHaveLength(1);
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    await first;
    const second = session.sendText("two");
    const secondTurnId = turnIdOf(await extension.waitForRequest("sendText", 1));
    expect(secondTurnId).not.toBe(turnId);
    extension.emit(SESSION_ID, { type: "turn-completed", turnId: secondTurnId, turnKind: "user" });
    await expect(second).resolves.toBeUndefined();
  });

  it("refuses empty text without a round trip", async () => {
    const { extension, session } = await openSession();
    expect((await errorOf(session.sendText(""))).code).toBe("INVALID_INPUT");
    expect(session.getStatus()).toBe("idle");
    await Promise.resolve();
    expect(extension.requestsOf("sendText")).toEqual([]);
  });

  it("drops events whose seq is not newer than the last one seen", async () => {
    const { extension, session } = await openSession();
    const deltas: string[] = [];
    session.onChatDelta((delta) => deltas.push(delta));
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t", messageId: "m", delta: "a" }, 1);
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t", messageId: "m", delta: "a-again" }, 1);
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t", messageId: "m", delta: "b" }, 3);
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t", messageId: "m", delta: "late" }, 2);
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t", messageId: "m", delta: "c" }, 4);
    extension.emit("session-other", { type: "chat-delta", turnId: "t", messageId: "m", delta: "other" }, 5);
    await vi.waitFor(() => expect(deltas).toContain("c"));
    expect(deltas).toEqual(["a", "b", "c"]);
  });

  it("hides the chat of prepare turns but reports their completion status", async () => {
    const { extension, session } = await openSession();
    const deltas: string[] = [];
    session.onChatDelta((delta) => deltas.push(delta));
    extension.emit(SESSION_ID, { type: "turn-started", turnId: "p", turnKind: "prepare" });
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "p", messageId: "m0", delta: "hidden" });
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "u", messageId: "m1", delta: "shown" });
    await vi.waitFor(() => expect(deltas).toEqual(["shown"]));
  });

  it("reports status changes only when the status changes", async () => {
    const { extension, session } = await openSession();
    const statuses: string[] = [];
    session.onStatus((status) => statuses.push(status));
    extension.emit(SESSION_ID, { type: "status-changed", status: "idle" });
    extension.emit(SESSION_ID, { type: "status-changed", status: "running" });
    extension.emit(SESSION_ID, { type: "status-changed", status: "running" });
    extension.emit(SESSION_ID, { type: "status-changed", status: "error" });
    await vi.waitFor(() => expect(statuses).toEqual(["running", "error"]));
  });

  it("passes activity and Core's errors on, with their context", async () => {
    const { extension, session } = await openSession();
    const seen: string[] = [];
    session.onActivity((activity, context) => seen.push(`${activity.kind}:${activity.title}:${context.turnId}`));
    session.onError((error, context) => seen.push(`${error.code}:${context.source}`));
    extension.emit(SESSION_ID, {
      type: "activity-updated",
      turnId: "t1",
      activity: { id: "a1", kind: "file-edit", status: "completed", title: "src/app.ts" },
    });
    extension.emit(SESSION_ID, { type: "error-reported", error: { code: "PROVIDER_OUTPUT_INVALID", message: "garbage" } });
    await vi.waitFor(() => expect(seen).toEqual(["file-edit:src/app.ts:t1", "PROVIDER_OUTPUT_INVALID:core"]));
  });

  it("reports a failed turn it does not await through onError", async () => {
    const { extension, session } = await openSession();
    const errors: string[] = [];
    session.onError((error) => errors.push(error.code));
    extension.emit(SESSION_ID, {
      type: "turn-failed",
      turnId: "from-another-tab",
      turnKind: "user",
      error: { code: "PROVIDER_FAILED", message: "exit 1" },
    });
    await vi.waitFor(() => expect(errors).toEqual(["PROVIDER_FAILED"]));
  });

  it("reports an invalid event for the session as SDK_PROTOCOL_ERROR", async () => {
    const { extension, session } = await openSession();
    const errors: PedelecError[] = [];
    session.onError((error) => errors.push(error));
    extension.send({ type: "event", sessionId: SESSION_ID, seq: 1, emittedAt: "now", event: { type: "chat-delta" } });
    await vi.waitFor(() => expect(errors.map((error) => error.code)).toEqual(["SDK_PROTOCOL_ERROR"]));
    // The invalid event consumed no seq: the same seq with a valid event still counts.
    const deltas: string[] = [];
    session.onChatDelta((delta) => deltas.push(delta));
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t", messageId: "m", delta: "ok" }, 1);
    await vi.waitFor(() => expect(deltas).toEqual(["ok"]));
  });

  it("keeps dispatching when an app callback throws", async () => {
    const { extension, session } = await openSession();
    const reported: unknown[] = [];
    vi.stubGlobal("reportError", (error: unknown) => reported.push(error));
    const deltas: string[] = [];
    session.onChatDelta(() => {
      throw new Error("app bug");
    });
    session.onChatDelta((delta) => deltas.push(delta));
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t", messageId: "m", delta: "x" });
    await vi.waitFor(() => expect(deltas).toEqual(["x"]));
    expect(reported).toEqual([new Error("app bug")]);
  });

  it("stops calling a callback after its unsubscribe", async () => {
    const { extension, session } = await openSession();
    const deltas: string[] = [];
    const stop = session.onChatDelta((delta) => deltas.push(delta));
    const other: string[] = [];
    session.onChatDelta((delta) => other.push(delta));
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t", messageId: "m", delta: "1" });
    await vi.waitFor(() => expect(deltas).toEqual(["1"]));
    stop();
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t", messageId: "m", delta: "2" });
    await vi.waitFor(() => expect(other).toEqual(["1", "2"]));
    expect(deltas).toEqual(["1"]);
  });

  it("asks Core to cancel the active turn", async () => {
    const { extension, session } = await openSession();
    const sending = session.sendText("long job");
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    await session.cancel();
    expect(extension.requestsOf("cancelTurn")[0]?.payload).toEqual({ sessionId: SESSION_ID });
    extension.emit(SESSION_ID, {
      type: "turn-failed",
      turnId,
      turnKind: "user",
      error: { code: "TURN_CANCELLED", message: "cancelled" },
    });
    expect((await errorOf(sending)).code).toBe("TURN_CANCELLED");
  });
});

describe("PedelecSession end", () => {
  it("rejects a pending sendText with SESSION_ENDED and fires onEnded once", async () => {
    const { extension, session } = await openSession();
    extension.handle("sendText", () => NO_REPLY); // still in flight when end() is called
    const ended: PedelecEventContext[] = [];
    session.onEnded((context) => ended.push(context));
    const sending = session.sendText("Hello");
    await extension.waitForRequest("sendText");
    const ending = session.end();
    expect((await errorOf(sending)).code).toBe("SESSION_ENDED");
    await ending;
    await session.end();
    extension.emit(SESSION_ID, { type: "session-ended", reason: "requested" });
    await Promise.resolve();
    expect(extension.requestsOf("endSession")).toHaveLength(1);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ sessionId: SESSION_ID, source: "sdk" });
    expect(session.getStatus()).toBe("ended");
    expect((await errorOf(session.sendText("again"))).code).toBe("SESSION_ENDED");
  });

  it("ends on Core's session-ended: pending turn rejects, onEnded fires once with the reason, end() needs no request", async () => {
    const { extension, session } = await openSession();
    const ended: PedelecEventContext[] = [];
    const statuses: string[] = [];
    session.onEnded((context) => ended.push(context));
    session.onStatus((status) => statuses.push(status));
    const sending = session.sendText("Hello");
    await extension.waitForRequest("sendText");
    extension.emit(SESSION_ID, { type: "status-changed", status: "ended" });
    extension.emit(SESSION_ID, { type: "session-ended", reason: "expired" });
    extension.emit(SESSION_ID, { type: "session-ended", reason: "expired" });
    expect((await errorOf(sending)).code).toBe("SESSION_ENDED");
    await session.end();
    expect(extension.requestsOf("endSession")).toEqual([]);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ source: "core", seq: 2, endReason: "expired" });
    expect(statuses).toEqual(["ended"]);
  });

  it("says the page ended the session when end() did", async () => {
    const { session } = await openSession();
    const ended: PedelecEventContext[] = [];
    session.onEnded((context) => ended.push(context));
    await session.end();
    expect(ended).toEqual([expect.objectContaining({ source: "sdk", endReason: "requested" })]);
  });

  it("calls an onEnded registered after the end, once", async () => {
    const { session } = await openSession();
    await session.end();
    const late = vi.fn();
    session.onEnded(late);
    const cancelled = vi.fn();
    session.onEnded(cancelled)();
    await vi.waitFor(() => expect(late).toHaveBeenCalledTimes(1));
    expect(cancelled).not.toHaveBeenCalled();
  });

  it("lets end() be retried after a failed request, and accepts THREAD_NOT_FOUND as ended", async () => {
    const { extension, session } = await openSession();
    extension.handle("endSession", () => {
      throw new PedelecError("NATIVE_HOST_UNAVAILABLE", "no host");
    });
    expect((await errorOf(session.end())).code).toBe("NATIVE_HOST_UNAVAILABLE");
    extension.handle("endSession", () => {
      throw new PedelecError("THREAD_NOT_FOUND", "gone");
    });
    await expect(session.end()).resolves.toBeUndefined();
    expect(extension.requestsOf("endSession")).toHaveLength(2);
  });
});

describe("PedelecSession and the extension connection", () => {
  it("rejects the pending turn and reports EXTENSION_DISCONNECTED when the port dies", async () => {
    const { extension, session } = await openSession();
    const errors: Array<[string, string]> = [];
    session.onError((error, context) => errors.push([error.code, context.source]));
    const sending = session.sendText("Hello");
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    extension.emit(SESSION_ID, { type: "status-changed", status: "running", turnId });
    await vi.waitFor(() => expect(session.getStatus()).toBe("running"));
    extension.dropPort();
    expect((await errorOf(sending)).code).toBe("EXTENSION_DISCONNECTED");
    expect(errors).toEqual([["EXTENSION_DISCONNECTED", "sdk"]]);
    expect(session.getStatus()).toBe("error");
  });

  it("re-attaches over a new port on the next call, getting the events it missed replayed once", async () => {
    const { extension, session } = await openSession();
    const deltas: Array<[string, number | undefined]> = [];
    session.onChatDelta((delta, context) => deltas.push([delta, context.seq]));
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t0", messageId: "m0", delta: "seen" });
    await vi.waitFor(() => expect(deltas).toHaveLength(1));
    extension.dropPort();
    // Emitted while the page had no port: Core keeps them for the re-attach.
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t0", messageId: "m0", delta: " missed" });
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "t0", messageId: "m0", delta: " twice" });
    extension.handle("resumeSession", (request, fake, route) => {
      const { afterSeq } = request.payload as { afterSeq: number };
      fake.replay(SESSION_ID, afterSeq, route);
      // The last one also reaches the new port live, as an event a second route relays would.
      fake.replay(SESSION_ID, 2, route);
      return sessionInfo({ lastSeq: fake.lastSeqOf(SESSION_ID) });
    });
    const sending = session.sendText("after reconnect");
    const resume = await extension.waitForRequest("resumeSession");
    expect(resume.payload).toEqual({ sessionId: SESSION_ID, afterSeq: 1 });
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    expect(extension.requests.map((request) => request.type)).toEqual(["createSession", "resumeSession", "sendText"]);
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    await expect(sending).resolves.toBeUndefined();
    expect(deltas).toEqual([
      ["seen", 1],
      [" missed", 2],
      [" twice", 3],
    ]);
    expect(session.lastSeq).toBe(4);
    expect(extension.connections).toHaveLength(2);
  });

  it("re-attaches by itself after the port died, so a tool call made meanwhile still reaches its handler once", async () => {
    const extension = new FakeExtension().install();
    const addTodo = { name: "add_todo", description: "Add a card.", argsSchema: { type: "object", properties: {} } } as const;
    const session = await new Pedelec().createSession({ provider: "claude", skills: { guidance: "", tools: [addTodo] } });
    const handled: string[] = [];
    session.onTool("add_todo", (_args, context) => {
      handled.push(context.toolRequestId);
      return { added: true };
    });
    extension.dropPort();
    const call = { turnId: "t1", toolRequestId: "call-while-away", toolName: "add_todo", args: {}, timeoutMs: 60_000 };
    // The agent asks while the page has no port; Core keeps the request for the page's return.
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call });
    extension.handle("resumeSession", (request, fake, route) => {
      fake.replay(SESSION_ID, (request.payload as { afterSeq: number }).afterSeq, route);
      return sessionInfo({ lastSeq: fake.lastSeqOf(SESSION_ID), status: "waiting_tool_result", pendingToolCalls: [call] });
    });
    // No call from the app: the handle notices the dead port and comes back on its own.
    const submitted = await extension.waitForRequest("submitToolResult");
    expect(submitted.payload).toMatchObject({ toolRequestId: "call-while-away", outcome: { ok: true, result: { added: true } } });
    expect(extension.requestsOf("resumeSession").map((request) => request.payload)).toEqual([{ sessionId: SESSION_ID, afterSeq: 0 }]);
    expect(handled).toEqual(["call-while-away"]);
    expect(extension.connections).toHaveLength(2);
  });

  it("ends the session when it is gone after a reconnect", async () => {
    const { extension, session } = await openSession();
    extension.dropPort();
    extension.handle("resumeSession", () => {
      throw new PedelecError("THREAD_NOT_FOUND", "auto-ended");
    });
    const ended = vi.fn();
    session.onEnded(ended);
    expect((await errorOf(session.sendText("hi"))).code).toBe("SESSION_ENDED");
    expect(ended).toHaveBeenCalledTimes(1);
    expect(session.getStatus()).toBe("ended");
  });
});

describe("PedelecSession's status mirror", () => {
  it("shows a status change the transition table lacks all the same, reporting no error", async () => {
    const { extension, session } = await openSession();
    const statuses: string[] = [];
    const errors: string[] = [];
    session.onStatus((status) => statuses.push(status));
    session.onError((error) => errors.push(error.code));
    // idle → waiting_tool_result has no trigger (events were missed): Core owns the status, so the page shows it.
    extension.emit(SESSION_ID, { type: "status-changed", status: "waiting_tool_result", turnId: "t9" });
    extension.emit(SESSION_ID, { type: "status-changed", status: "idle", turnId: "t9" });
    await vi.waitFor(() => expect(statuses).toEqual(["waiting_tool_result", "idle"]));
    expect(session.getStatus()).toBe("idle");
    expect(errors).toEqual([]);
  });
});
