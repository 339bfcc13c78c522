import { afterEach, describe, expect, it, vi } from "vitest";
import type { PendingToolCall, SessionEvent } from "@pedelec/protocol/session-events";
import { Pedelec } from "./pedelec.js";
import { errorOf } from "./testing/error-of.js";
import { FakeExtension, NO_REPLY, sessionInfo } from "./testing/fake-extension.js";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { PedelecEventContext } from "./types.js";

const SESSION_ID = "session-0001";

const delta = (text: string, turnId = "turn-1"): SessionEvent => ({ type: "chat-delta", turnId, messageId: "m1", delta: text });

function pendingCall(toolRequestId: string, turnId = "turn-1"): PendingToolCall {
  return { turnId, toolRequestId, toolName: "add_todo", args: { title: toolRequestId }, timeoutMs: 60_000 };
}

/** Answers resumeSession like Core: the session as it is now, then the kept events after afterSeq. */
function answerResumes(extension: FakeExtension, overrides: Parameters<typeof sessionInfo>[0] = {}): void {
  extension.handle("resumeSession", (request, fake, route) => {
    const { afterSeq } = request.payload as { afterSeq?: number };
    if (afterSeq !== undefined) fake.replay(SESSION_ID, afterSeq, route);
    return sessionInfo({ lastSeq: fake.lastSeqOf(SESSION_ID), ...overrides });
  });
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("resumeSession with afterSeq", () => {
  it("replays the kept events after afterSeq once, in order, to callbacks registered right after the await", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    // Events of an earlier page life: the page handled up to seq 2.
    extension.emit(SESSION_ID, { type: "turn-started", turnId: "turn-1", turnKind: "user" });
    for (const text of ["a", "b", "c", "d"]) extension.emit(SESSION_ID, delta(text));
    extension.handle("resumeSession", (_request, fake, route) => {
      fake.replay(SESSION_ID, 2, route);
      fake.replay(SESSION_ID, 3, route); // the same events again, as a second route would relay them
      return sessionInfo({ lastSeq: fake.lastSeqOf(SESSION_ID), status: "running" });
    });
    const session = await pedelec.resumeSession(SESSION_ID, { afterSeq: 2 });
    const seen: Array<[string, PedelecEventContext]> = [];
    session.onChatDelta((text, context) => seen.push([text, context]));
    expect((await extension.waitForRequest("resumeSession")).payload).toEqual({ sessionId: SESSION_ID, afterSeq: 2 });
    await vi.waitFor(() => expect(seen.map(([text]) => text)).toEqual(["b", "c", "d"]));
    expect(seen.map(([, context]) => context.seq)).toEqual([3, 4, 5]);
    expect(seen[0]?.[1]).toMatchObject({ source: "core", turnId: "turn-1", messageId: "m1" });
    extension.emit(SESSION_ID, delta("live"));
    await vi.waitFor(() => expect(seen.map(([text]) => text)).toEqual(["b", "c", "d", "live"]));
    expect(session.lastSeq).toBe(6);
  });

  it("shows the status of the answer instead of replaying the status changes that led to it", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    extension.emit(SESSION_ID, { type: "status-changed", status: "running", turnId: "turn-1" });
    extension.emit(SESSION_ID, { type: "turn-completed", turnId: "turn-1", turnKind: "user" });
    extension.emit(SESSION_ID, { type: "status-changed", status: "idle", turnId: "turn-1" });
    answerResumes(extension, { status: "idle" });
    const session = await pedelec.resumeSession(SESSION_ID, { afterSeq: 0 });
    const statuses: string[] = [];
    session.onStatus((status) => statuses.push(status));
    const marker: string[] = [];
    session.onChatDelta((text) => marker.push(text));
    extension.emit(SESSION_ID, { type: "status-changed", status: "running", turnId: "turn-2" });
    extension.emit(SESSION_ID, delta("marker", "turn-2"));
    await vi.waitFor(() => expect(marker).toEqual(["marker"]));
    expect(statuses).toEqual(["running"]);
    expect(session.getStatus()).toBe("running");
  });

  it("takes Core's numbering when afterSeq is newer than anything Core kept", async () => {
    const extension = new FakeExtension().install();
    extension.handle("resumeSession", () => sessionInfo({ lastSeq: 3 }));
    const session = await new Pedelec().resumeSession(SESSION_ID, { afterSeq: 40 });
    const seen: string[] = [];
    session.onChatDelta((text) => seen.push(text));
    extension.emit(SESSION_ID, delta("new"), 4);
    await vi.waitFor(() => expect(seen).toEqual(["new"]));
  });

  it("refuses a bad afterSeq without a round trip", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    for (const afterSeq of [-1, 1.5, Number.NaN]) {
      expect((await errorOf(pedelec.resumeSession(SESSION_ID, { afterSeq }))).code, String(afterSeq)).toBe("INVALID_INPUT");
    }
    const untyped = pedelec.resumeSession.bind(pedelec) as (id: string, options: unknown) => Promise<unknown>;
    expect((await errorOf(untyped(SESSION_ID, { afterSeq: "3" }))).code).toBe("INVALID_INPUT");
    await Promise.resolve();
    expect(extension.requestsOf("resumeSession")).toEqual([]);
  });
});

describe("resumeSession and the tool calls still waiting", () => {
  it("claims and runs each pending call once, with the handler registered after the await, even without afterSeq", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    extension.handle("resumeSession", () =>
      sessionInfo({ lastSeq: 0, status: "waiting_tool_result", pendingToolCalls: [pendingCall("call-1"), pendingCall("call-2")] }),
    );
    const session = await pedelec.resumeSession<"add_todo">(SESSION_ID);
    const handled: string[] = [];
    session.onTool("add_todo", (args, context) => {
      handled.push(context.toolRequestId);
      return { added: args };
    });
    const first = await extension.waitForRequest("submitToolResult", 0);
    const second = await extension.waitForRequest("submitToolResult", 1);
    expect([first.payload, second.payload]).toEqual([
      { sessionId: SESSION_ID, toolRequestId: "call-1", outcome: { ok: true, result: { added: { title: "call-1" } } } },
      { sessionId: SESSION_ID, toolRequestId: "call-2", outcome: { ok: true, result: { added: { title: "call-2" } } } },
    ]);
    const claims = extension.requestsOf("claimToolCall");
    expect(claims.map((request) => request.payload)).toEqual([
      { sessionId: SESSION_ID, toolRequestId: "call-1" },
      { sessionId: SESSION_ID, toolRequestId: "call-2" },
    ]);
    expect(extension.requests.indexOf(claims[0]!)).toBeLessThan(extension.requests.indexOf(first));
    for (const toolRequestId of ["call-1", "call-2"]) {
      extension.emit(SESSION_ID, { type: "tool-call-settled", turnId: "turn-1", toolRequestId, outcome: "answered" });
    }
    // Core relays the same call again (another route's copy): the page does not run it twice. A new call after it
    // fences the check: its claim goes out after any claim the copy would have caused.
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...pendingCall("call-1") });
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...pendingCall("call-3") });
    await extension.waitForRequest("submitToolResult", 2);
    expect(handled).toEqual(["call-1", "call-2", "call-3"]);
    expect(extension.requestsOf("claimToolCall").map((request) => (request.payload as { toolRequestId: string }).toolRequestId)).toEqual([
      "call-1",
      "call-2",
      "call-3",
    ]);
  });

  it("runs no replayed request of a call that no longer waits", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...pendingCall("call-old") });
    extension.emit(SESSION_ID, { type: "tool-call-settled", turnId: "turn-1", toolRequestId: "call-old", outcome: "answered" });
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...pendingCall("call-new") });
    answerResumes(extension, { pendingToolCalls: [pendingCall("call-new")] });
    const session = await pedelec.resumeSession(SESSION_ID, { afterSeq: 0 });
    const handled: string[] = [];
    session.onTool((_args, context) => {
      handled.push(context.toolRequestId);
      return "ok";
    });
    await extension.waitForRequest("submitToolResult");
    expect(handled).toEqual(["call-new"]);
    expect(extension.requestsOf("claimToolCall").map((request) => (request.payload as { toolRequestId: string }).toolRequestId)).toEqual([
      "call-new",
    ]);
  });
});

describe("resumeSession during a turn started elsewhere", () => {
  it("reports the turn's events with its kind and its failure, with no sendText() attached", async () => {
    const extension = new FakeExtension().install();
    extension.handle("resumeSession", () => sessionInfo({ lastSeq: 4, status: "running", activeTurn: { turnId: "other-tab", turnKind: "user" } }));
    const session = await new Pedelec().resumeSession(SESSION_ID);
    expect(session.getStatus()).toBe("running");
    const seen: string[] = [];
    session.onChatDelta((text, context) => seen.push(`${text}:${context.turnKind}`));
    session.onError((error, context) => seen.push(`${error.code}:${context.turnId}:${context.turnKind}`));
    session.onStatus((status, context) => seen.push(`${status}:${context.source}:${context.turnKind}`));
    extension.emit(SESSION_ID, delta("working", "other-tab"), 5);
    extension.emit(
      SESSION_ID,
      { type: "turn-failed", turnId: "other-tab", turnKind: "user", error: { code: "PROVIDER_FAILED", message: "exit 1" } },
      6,
    );
    extension.emit(SESSION_ID, { type: "status-changed", status: "error", turnId: "other-tab" }, 7);
    await vi.waitFor(() => expect(seen).toEqual(["working:user", "PROVIDER_FAILED:other-tab:user", "error:core:user"]));
  });

  it("hides the chat of a prepare turn that was already running", async () => {
    const extension = new FakeExtension().install();
    extension.handle("resumeSession", () => sessionInfo({ lastSeq: 2, status: "running", activeTurn: { turnId: "warm-up", turnKind: "prepare" } }));
    const session = await new Pedelec().resumeSession(SESSION_ID);
    const seen: string[] = [];
    session.onChatDelta((text) => seen.push(text));
    session.onChat((message) => seen.push(message.text));
    extension.emit(SESSION_ID, delta("hidden", "warm-up"), 3);
    extension.emit(SESSION_ID, { type: "chat-completed", turnId: "warm-up", messageId: "m1", text: "hidden" }, 4);
    extension.emit(SESSION_ID, delta("shown", "user-turn"), 5);
    await vi.waitFor(() => expect(seen).toEqual(["shown"]));
  });

  it("ends a handle at once when the resumed session is already over", async () => {
    const extension = new FakeExtension().install();
    extension.handle("resumeSession", () => sessionInfo({ status: "ended" }));
    const session = await new Pedelec().resumeSession(SESSION_ID);
    const ended = vi.fn();
    session.onEnded(ended);
    await vi.waitFor(() => expect(ended).toHaveBeenCalledTimes(1));
    expect(session.getStatus()).toBe("ended");
    expect((await errorOf(session.sendText("hi"))).code).toBe("SESSION_ENDED");
  });
});

describe("re-attaching after the link to Core broke", () => {
  it("re-attaches with afterSeq on the next call after a session-interrupted notice", async () => {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    const seen: string[] = [];
    session.onChatDelta((text) => seen.push(text));
    session.onError((error) => seen.push(error.code));
    extension.emit(SESSION_ID, delta("before"));
    await vi.waitFor(() => expect(seen).toEqual(["before"]));
    extension.send({
      type: "session-interrupted",
      sessionId: SESSION_ID,
      error: { code: "CORE_RUNTIME_UNAVAILABLE", message: "Core went away" },
    });
    await vi.waitFor(() => expect(seen).toEqual(["before", "CORE_RUNTIME_UNAVAILABLE"]));
    // Core came back and said something before the extension followed the session again.
    extension.keep(SESSION_ID, delta("said while unheard"));
    answerResumes(extension);
    await session.cancel();
    expect(extension.requestsOf("resumeSession")[0]?.payload).toEqual({ sessionId: SESSION_ID, afterSeq: 1 });
    await vi.waitFor(() => expect(seen).toEqual(["before", "CORE_RUNTIME_UNAVAILABLE", "said while unheard"]));
    // Once re-attached, calls go straight out again.
    await session.cancel();
    expect(extension.requestsOf("resumeSession")).toHaveLength(1);
  });

  it("reports a turn the broken link failed once, not again when the restarted Core replays its turn-failed", async () => {
    const extension = new FakeExtension().install();
    extension.handle("sendText", (request) => ({ turnId: (request.payload as { turnId: string }).turnId }));
    const session = await new Pedelec().createSession({ provider: "claude" });
    const errors: string[] = [];
    session.onError((error) => errors.push(error.code));
    const turn = session.sendText("hang");
    const sent = await extension.waitForRequest("sendText");
    const turnId = (sent.payload as { turnId: string }).turnId;
    extension.emit(SESSION_ID, { type: "turn-started", turnId, turnKind: "user" });
    extension.send({
      type: "session-interrupted",
      sessionId: SESSION_ID,
      error: { code: "CORE_RUNTIME_UNAVAILABLE", message: "Core went away" },
    });
    expect((await errorOf(turn)).code).toBe("CORE_RUNTIME_UNAVAILABLE");
    // The restarted Core ends the turn it found running, and the re-attach replays that.
    extension.keep(SESSION_ID, {
      type: "turn-failed",
      turnId,
      turnKind: "user",
      error: { code: "SESSION_ERROR", message: "Core stopped while this turn was running" },
    });
    answerResumes(extension, { status: "error" });
    await session.cancel();
    await vi.waitFor(() => expect(session.lastSeq).toBe(2));
    expect(errors).toEqual(["CORE_RUNTIME_UNAVAILABLE"]);
    // A later turn that fails is reported as usual.
    const next = session.sendText("again");
    const nextId = ((await extension.waitForRequest("sendText", 1)).payload as { turnId: string }).turnId;
    extension.emit(SESSION_ID, { type: "turn-failed", turnId: nextId, turnKind: "user", error: { code: "PROVIDER_FAILED", message: "boom" } });
    expect((await errorOf(next)).code).toBe("PROVIDER_FAILED");
    expect(errors).toEqual(["CORE_RUNTIME_UNAVAILABLE", "PROVIDER_FAILED"]);
  });
});

describe("a sendText in flight when the link broke", () => {
  const LOST = { code: "CORE_RUNTIME_UNAVAILABLE", message: "the connection to Pedelec Core closed" } as const;

  /** The first sendText fails as the host fails requests in flight when Core dies (and the extension says so). */
  function loseFirstSendText(extension: FakeExtension): void {
    let sends = 0;
    extension.handle("sendText", (request) => {
      sends += 1;
      if (sends > 1) return { turnId: (request.payload as { turnId: string }).turnId };
      extension.send({ type: "session-interrupted", sessionId: SESSION_ID, error: LOST });
      throw new PedelecError(LOST.code, LOST.message);
    });
  }

  it("goes again under the same turn id once re-attached, and the turn runs to its end", async () => {
    const extension = new FakeExtension().install();
    loseFirstSendText(extension);
    const session = await new Pedelec().createSession({ provider: "claude" });
    const errors: string[] = [];
    session.onError((error) => errors.push(error.code));
    answerResumes(extension, { status: "error" });
    const sending = session.sendText("Add milk");
    const again = await extension.waitForRequest("sendText", 1);
    const [first] = extension.requestsOf("sendText");
    expect(again.payload).toEqual(first?.payload);
    // Re-attached (with the replay) before sending again.
    expect(extension.requests.map((request) => request.type).filter((type) => type !== "getApprovalStatus")).toEqual([
      "createSession",
      "sendText",
      "resumeSession",
      "sendText",
    ]);
    const { turnId } = again.payload as { turnId: string };
    extension.emit(SESSION_ID, { type: "turn-started", turnId, turnKind: "user" });
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    await sending;
    expect(errors).toEqual(["CORE_RUNTIME_UNAVAILABLE"]);
  });

  it("reports a failure of the turn it sent again, as news", async () => {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    const errors: string[] = [];
    session.onError((error) => errors.push(error.code));
    answerResumes(extension, { status: "error" });
    loseFirstSendText(extension);
    const sending = session.sendText("Add milk");
    const { turnId } = (await extension.waitForRequest("sendText", 1)).payload as { turnId: string };
    // This Core never heard of the turn: it starts it, and the turn fails in a later message (Chrome hands a page
    // each port message as a task of its own, after the page has taken the answer).
    await new Promise((resolve) => setTimeout(resolve, 0));
    extension.emit(SESSION_ID, { type: "turn-failed", turnId, turnKind: "user", error: { code: "PROVIDER_FAILED", message: "boom" } });
    expect((await errorOf(sending)).code).toBe("PROVIDER_FAILED");
    expect(extension.requestsOf("sendText")).toHaveLength(2);
    expect(errors).toEqual(["CORE_RUNTIME_UNAVAILABLE", "PROVIDER_FAILED"]);
  });

  it("goes on when the notice of the break arrives after the failure, as it does from the real extension", async () => {
    const extension = new FakeExtension().install();
    extension.handle("sendText", (request) => {
      if (extension.requestsOf("sendText").length > 1) return { turnId: (request.payload as { turnId: string }).turnId };
      throw new PedelecError(LOST.code, LOST.message);
    });
    const session = await new Pedelec().createSession({ provider: "claude" });
    answerResumes(extension, { status: "error" });
    const sending = session.sendText("Add milk");
    const again = await extension.waitForRequest("sendText", 1);
    // The host fails the request in flight first, then says Core is gone; the page is sending again by then.
    extension.send({ type: "session-interrupted", sessionId: SESSION_ID, error: LOST });
    const { turnId } = again.payload as { turnId: string };
    await new Promise((resolve) => setTimeout(resolve, 0));
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    await sending;
  });

  it("rejects with the restarted Core's SESSION_ERROR when the turn had started, reported once", async () => {
    const extension = new FakeExtension().install();
    loseFirstSendText(extension);
    const session = await new Pedelec().createSession({ provider: "claude" });
    const errors: string[] = [];
    session.onError((error) => errors.push(error.code));
    extension.handle("resumeSession", (request, fake, route) => {
      // The earlier Core had taken the turn; the restarted one ended it, and the re-attach replays that.
      const { turnId } = extension.requestsOf("sendText")[0]!.payload as { turnId: string };
      fake.keep(SESSION_ID, { type: "turn-started", turnId, turnKind: "user" });
      fake.keep(SESSION_ID, {
        type: "turn-failed",
        turnId,
        turnKind: "user",
        error: { code: "SESSION_ERROR", message: "Core stopped while this turn was running" },
      });
      fake.replay(SESSION_ID, (request.payload as { afterSeq: number }).afterSeq, route);
      return sessionInfo({ lastSeq: fake.lastSeqOf(SESSION_ID), status: "error" });
    });
    expect((await errorOf(session.sendText("hang"))).code).toBe("SESSION_ERROR");
    expect(errors).toEqual(["CORE_RUNTIME_UNAVAILABLE"]);
    // Core answered the same turn id without starting it again; the session takes the next message.
    await vi.waitFor(() => expect(extension.requestsOf("sendText")).toHaveLength(2));
    const next = session.sendText("again");
    const nextId = ((await extension.waitForRequest("sendText", 2)).payload as { turnId: string }).turnId;
    extension.emit(SESSION_ID, { type: "turn-completed", turnId: nextId, turnKind: "user" });
    await next;
  });

  it("goes again over a new port when the page's port dropped with it in flight", async () => {
    const extension = new FakeExtension().install();
    extension.handle("sendText", () => NO_REPLY);
    const session = await new Pedelec().createSession({ provider: "claude" });
    answerResumes(extension);
    const sending = session.sendText("Add milk");
    const first = await extension.waitForRequest("sendText");
    extension.handle("sendText", (request) => ({ turnId: (request.payload as { turnId: string }).turnId }));
    extension.dropPort();
    const again = await extension.waitForRequest("sendText", 1);
    expect(again.payload).toEqual(first.payload);
    expect(extension.routeOf(again)).not.toBe(extension.routeOf(first));
    const { turnId } = again.payload as { turnId: string };
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    await sending;
  });

  it("rejects with the link's error, sending nothing more, when re-attaching fails", async () => {
    const extension = new FakeExtension().install();
    loseFirstSendText(extension);
    const session = await new Pedelec().createSession({ provider: "claude" });
    extension.handle("resumeSession", () => {
      throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", "Pedelec Core did not start");
    });
    const failure = await errorOf(session.sendText("hang"));
    expect(failure.code).toBe("CORE_RUNTIME_UNAVAILABLE");
    expect(failure.message).toContain("did not start");
    expect(extension.requestsOf("sendText")).toHaveLength(1);
  });

  it("does not send again after a refusal that is not a broken link", async () => {
    const extension = new FakeExtension().install();
    extension.handle("sendText", () => {
      throw new PedelecError("SESSION_BUSY", "session is already running a turn");
    });
    const session = await new Pedelec().createSession({ provider: "claude" });
    expect((await errorOf(session.sendText("hang"))).code).toBe("SESSION_BUSY");
    expect(extension.requestsOf("sendText")).toHaveLength(1);
    expect(extension.requestsOf("resumeSession")).toHaveLength(0);
  });
});
