import { afterEach, describe, expect, it, vi } from "vitest";
import type { PageRequest } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { Pedelec } from "./pedelec.js";
import { errorOf } from "./testing/error-of.js";
import { FakeExtension, NO_REPLY } from "./testing/fake-extension.js";
import type { PedelecEventContext } from "./types.js";

const SESSION_ID = "session-0001";

function turnIdOf(request: PageRequest): string {
  return (request.payload as { turnId: string }).turnId;
}

async function openSession() {
  const extension = new FakeExtension().install();
  extension.handle("prepareSession", (request) => ({ turnId: turnIdOf(request) }));
  const session = await new Pedelec().createSession({ provider: "claude" });
  return { extension, session };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("session.prepare()", () => {
  it("sends one prepare request, shares one promise, hides its chat and resolves when the prepare turn completes", async () => {
    const { extension, session } = await openSession();
    const chat: string[] = [];
    const statuses: Array<[string, PedelecEventContext]> = [];
    const activities: PedelecEventContext[] = [];
    session.onChatDelta((delta) => chat.push(delta));
    session.onChat((message) => chat.push(message.text));
    session.onStatus((status, context) => statuses.push([status, context]));
    session.onActivity((_activity, context) => activities.push(context));
    const preparing = session.prepare();
    expect(session.prepare()).toBe(preparing);
    const request = await extension.waitForRequest("prepareSession");
    const turnId = turnIdOf(request);
    expect(request.payload).toEqual({ sessionId: SESSION_ID, turnId });
    extension.emit(SESSION_ID, { type: "turn-started", turnId, turnKind: "prepare" });
    extension.emit(SESSION_ID, { type: "status-changed", status: "running", turnId });
    extension.emit(SESSION_ID, { type: "chat-delta", turnId, messageId: "m0", delta: "Ready." });
    extension.emit(SESSION_ID, { type: "chat-completed", turnId, messageId: "m0", text: "Ready." });
    extension.emit(SESSION_ID, {
      type: "activity-updated",
      turnId,
      activity: { id: "a1", kind: "file-read", status: "completed", title: "README.md" },
    });
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "prepare" });
    extension.emit(SESSION_ID, { type: "status-changed", status: "idle", turnId });
    await expect(preparing).resolves.toBeUndefined();
    await vi.waitFor(() => expect(statuses.map(([status]) => status)).toEqual(["running", "idle"]));
    expect(chat).toEqual([]);
    expect(statuses.every(([, context]) => context.turnKind === "prepare")).toBe(true);
    expect(activities).toEqual([expect.objectContaining({ turnId, turnKind: "prepare" })]);
    expect(session.prepare()).toBe(preparing);
    expect(extension.requestsOf("prepareSession")).toHaveLength(1);
  });

  it("resolves at once when Core has nothing to prepare, and leaves the session free", async () => {
    const { extension, session } = await openSession();
    extension.handle("prepareSession", () => ({ turnId: null }));
    await expect(session.prepare()).resolves.toBeUndefined();
    const sending = session.sendText("Hello");
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    await expect(sending).resolves.toBeUndefined();
  });

  it("makes sendText wait its turn: SESSION_BUSY while the prepare turn runs", async () => {
    const { extension, session } = await openSession();
    const preparing = session.prepare();
    const turnId = turnIdOf(await extension.waitForRequest("prepareSession"));
    expect((await errorOf(session.sendText("too early"))).code).toBe("SESSION_BUSY");
    expect(extension.requestsOf("sendText")).toEqual([]);
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "prepare" });
    await preparing;
    const sending = session.sendText("now");
    const userTurnId = turnIdOf(await extension.waitForRequest("sendText"));
    extension.emit(SESSION_ID, { type: "turn-completed", turnId: userTurnId, turnKind: "user" });
    await expect(sending).resolves.toBeUndefined();
  });

  it("rejects with SESSION_BUSY while a user turn runs, and tries again on the next call", async () => {
    const { extension, session } = await openSession();
    const sending = session.sendText("first");
    const turnId = turnIdOf(await extension.waitForRequest("sendText"));
    expect((await errorOf(session.prepare())).code).toBe("SESSION_BUSY");
    extension.emit(SESSION_ID, { type: "turn-completed", turnId, turnKind: "user" });
    await sending;
    // A turn elsewhere (another tab) is Core's to refuse.
    extension.handle("prepareSession", () => {
      throw new PedelecError("SESSION_BUSY", "a turn is running");
    });
    expect((await errorOf(session.prepare())).code).toBe("SESSION_BUSY");
    extension.handle("prepareSession", () => ({ turnId: null }));
    await expect(session.prepare()).resolves.toBeUndefined();
    expect(extension.requestsOf("prepareSession")).toHaveLength(2);
  });

  it("rejects with PREPARE_FAILED and the cause when the prepare turn fails; onError gets the turn's own error", async () => {
    const { extension, session } = await openSession();
    const errors: Array<[string, string | undefined]> = [];
    session.onError((error, context) => errors.push([error.code, context.turnKind]));
    const preparing = session.prepare();
    const turnId = turnIdOf(await extension.waitForRequest("prepareSession"));
    extension.emit(SESSION_ID, {
      type: "turn-failed",
      turnId,
      turnKind: "prepare",
      error: { code: "PROVIDER_NOT_AUTHENTICATED", message: "Sign in to claude" },
    });
    const error = await errorOf(preparing);
    expect(error.code).toBe("PREPARE_FAILED");
    expect(error.details).toMatchObject({ cause: { code: "PROVIDER_NOT_AUTHENTICATED", message: "Sign in to claude" } });
    expect(errors).toEqual([["PROVIDER_NOT_AUTHENTICATED", "prepare"]]);
    // A failed prepare does not stick: the next call asks again.
    expect(session.prepare()).not.toBe(preparing);
    await extension.waitForRequest("prepareSession", 1);
  });

  it("rejects with PREPARE_FAILED when its request cannot be delivered", async () => {
    const { extension, session } = await openSession();
    extension.handle("prepareSession", () => {
      throw new PedelecError("NATIVE_HOST_UNAVAILABLE", "no host");
    });
    const error = await errorOf(session.prepare());
    expect(error.code).toBe("PREPARE_FAILED");
    expect(error.details).toMatchObject({ cause: { code: "NATIVE_HOST_UNAVAILABLE" } });
  });

  it("rejects with SESSION_ENDED when the session ends first", async () => {
    const { extension, session } = await openSession();
    extension.handle("prepareSession", () => NO_REPLY);
    const preparing = session.prepare();
    await extension.waitForRequest("prepareSession");
    await session.end();
    expect((await errorOf(preparing)).code).toBe("SESSION_ENDED");
    expect((await errorOf(session.prepare())).code).toBe("SESSION_ENDED");
  });
});
