import { afterEach, describe, expect, it, vi } from "vitest";
import type { PageRequest } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { Pedelec } from "./pedelec.js";
import { errorOf } from "./testing/error-of.js";
import { FakeExtension, NO_REPLY, sessionInfo } from "./testing/fake-extension.js";

const SESSION_ID = "session-0001";

function turnIdOf(request: PageRequest): string {
  return (request.payload as { turnId: string }).turnId;
}

async function openSession() {
  const extension = new FakeExtension().install();
  const session = await new Pedelec().createSession({ provider: "claude" });
  return { extension, session };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("sendText(text, { signal })", () => {
  it("rejects an already-aborted call with TURN_CANCELLED without sending anything", async () => {
    const { extension, session } = await openSession();
    const controller = new AbortController();
    controller.abort();
    expect((await errorOf(session.sendText("Hello", { signal: controller.signal }))).code).toBe("TURN_CANCELLED");
    await Promise.resolve();
    expect(extension.requestsOf("sendText")).toEqual([]);
  });

  it("rejects with the abort reason when it is a PedelecError", async () => {
    const { session } = await openSession();
    const reason = new PedelecError("SDK_BRIDGE_TIMEOUT", "the app gave up");
    const error = await errorOf(session.sendText("Hello", { signal: AbortSignal.abort(reason) }));
    expect(error).toBe(reason);
  });

  it("cancels the running turn on abort: rejects at once, sends cancelTurn, stays busy until the turn is over", async () => {
    const { extension, session } = await openSession();
    extension.handle("cancelTurn", () => NO_REPLY); // Core answers once the provider is gone
    const errors: string[] = [];
    session.onError((error) => errors.push(error.code));
    const controller = new AbortController();
    const sending = session.sendText("long job", { signal: controller.signal });
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    extension.emit(SESSION_ID, { type: "status-changed", status: "running", turnId });
    controller.abort();
    expect((await errorOf(sending)).code).toBe("TURN_CANCELLED");
    const cancel = await extension.waitForRequest("cancelTurn");
    expect(cancel.payload).toEqual({ sessionId: SESSION_ID });
    // Core is still stopping the turn: a new message would be refused there, so it is refused here.
    expect((await errorOf(session.sendText("next"))).code).toBe("SESSION_BUSY");
    extension.emit(SESSION_ID, {
      type: "turn-failed",
      turnId,
      turnKind: "user",
      error: { code: "TURN_CANCELLED", message: "the turn was cancelled" },
    });
    extension.emit(SESSION_ID, { type: "status-changed", status: "idle", turnId });
    await vi.waitFor(() => expect(session.getStatus()).toBe("idle"));
    const next = session.sendText("next");
    const nextTurnId = turnIdOf(await extension.waitForRequest("sendText", 1));
    extension.emit(SESSION_ID, { type: "turn-completed", turnId: nextTurnId, turnKind: "user" });
    await expect(next).resolves.toBeUndefined();
    expect(errors).toEqual([]);
  });

  it("cancels only after Core accepted the message when the abort comes while it is on its way", async () => {
    const { extension, session } = await openSession();
    let accept: () => void = () => {};
    extension.handle("sendText", (request) => new Promise((resolve) => (accept = () => resolve({ turnId: turnIdOf(request) }))));
    const controller = new AbortController();
    const sending = session.sendText("Hello", { signal: controller.signal });
    await extension.waitForRequest("sendText");
    controller.abort();
    expect((await errorOf(sending)).code).toBe("TURN_CANCELLED");
    await Promise.resolve();
    expect(extension.requestsOf("cancelTurn")).toEqual([]);
    accept();
    await extension.waitForRequest("cancelTurn");
  });

  it("sends nothing when aborted while the handle re-attaches over a new port", async () => {
    const { extension, session } = await openSession();
    extension.dropPort();
    extension.handle("resumeSession", () => NO_REPLY);
    const controller = new AbortController();
    const sending = session.sendText("Hello", { signal: controller.signal });
    const resume = await extension.waitForRequest("resumeSession");
    controller.abort();
    expect((await errorOf(sending)).code).toBe("TURN_CANCELLED");
    extension.send({ id: resume.id, ok: true, result: sessionInfo() });
    // The re-attach completes for the next call, which goes out at once; the aborted message never did.
    const later = session.sendText("later");
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    expect(extension.requestsOf("sendText").map((request) => (request.payload as { text: string }).text)).toEqual(["later"]);
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    await expect(later).resolves.toBeUndefined();
    expect(extension.requestsOf("cancelTurn")).toEqual([]);
  });

  it("refuses a signal that is not an AbortSignal", async () => {
    const { session } = await openSession();
    const untyped = session.sendText.bind(session) as (text: string, options: unknown) => Promise<void>;
    expect((await errorOf(untyped("Hello", { signal: "stop" }))).code).toBe("INVALID_INPUT");
  });
});

describe("createSession(input, { signal })", () => {
  it("sends nothing when already aborted", async () => {
    const extension = new FakeExtension().install();
    const error = await errorOf(new Pedelec().createSession({ provider: "claude" }, { signal: AbortSignal.abort() }));
    expect(error.code).toBe("SDK_TRANSPORT_ERROR");
    expect(error.details).toEqual({ aborted: true });
    await Promise.resolve();
    expect(extension.requestsOf("createSession")).toEqual([]);
  });

  it("rejects at once on abort, and ends the session Core creates after that", async () => {
    const extension = new FakeExtension().install();
    extension.handle("createSession", () => NO_REPLY); // e.g. the approval popup is still open
    const controller = new AbortController();
    const creating = new Pedelec().createSession({ provider: "claude" }, { signal: controller.signal });
    const request = await extension.waitForRequest("createSession");
    const reason = new PedelecError("APPROVAL_TIMEOUT", "the user did not answer in time");
    controller.abort(reason);
    expect(await errorOf(creating)).toBe(reason);
    extension.send({ id: request.id, ok: true, result: sessionInfo({ sessionId: "session-late" }) });
    const end = await extension.waitForRequest("endSession");
    expect(end.payload).toEqual({ sessionId: "session-late" });
  });
});

describe("resumeSession(id, { signal })", () => {
  it("sends nothing when already aborted, and rejects at once when aborted while waiting", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    expect((await errorOf(pedelec.resumeSession(SESSION_ID, { signal: AbortSignal.abort() }))).code).toBe("SDK_TRANSPORT_ERROR");
    await Promise.resolve();
    expect(extension.requestsOf("resumeSession")).toEqual([]);
    extension.handle("resumeSession", () => NO_REPLY);
    const controller = new AbortController();
    const resuming = pedelec.resumeSession(SESSION_ID, { signal: controller.signal, afterSeq: 3 });
    expect((await extension.waitForRequest("resumeSession")).payload).toEqual({ sessionId: SESSION_ID, afterSeq: 3 });
    controller.abort();
    const error = await errorOf(resuming);
    expect(error.code).toBe("SDK_TRANSPORT_ERROR");
    expect(error.message).toMatch(/resumeSession was aborted/);
  });
});
