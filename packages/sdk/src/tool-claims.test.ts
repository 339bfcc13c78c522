import { afterEach, describe, expect, it, vi } from "vitest";
import type { PageRequest } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { PendingToolCall } from "@pedelec/protocol/session-events";
import { Pedelec } from "./pedelec.js";
import type { PedelecSession } from "./pedelec-session.js";
import { FakeExtension } from "./testing/fake-extension.js";

const SESSION_ID = "session-0001";

const call = (toolRequestId: string): PendingToolCall => ({
  turnId: "turn-1",
  toolRequestId,
  toolName: "add_todo",
  args: { title: "milk" },
  timeoutMs: 60_000,
});

function toolRequestIdOf(request: PageRequest): string {
  return (request.payload as { toolRequestId: string }).toolRequestId;
}

/** Resolves once `session` handled every event emitted so far (events arrive in order). */
async function drained(extension: FakeExtension, session: PedelecSession): Promise<void> {
  const marker = `marker-${Math.random()}`;
  const seen: string[] = [];
  const stop = session.onChatDelta((delta) => seen.push(delta));
  extension.emit(SESSION_ID, { type: "chat-delta", turnId: "turn-1", messageId: "m", delta: marker });
  await vi.waitFor(() => expect(seen).toContain(marker));
  stop();
}

/** Two tabs of the app following one session: two clients, two ports, two claimants. */
async function twoTabs() {
  const extension = new FakeExtension().install();
  const first = new Pedelec();
  const second = new Pedelec();
  const tabs = [await first.createSession({ provider: "claude" }), await second.resumeSession(SESSION_ID)] as const;
  const [firstRoute, secondRoute] = extension.routes;
  return { extension, tabs, routes: [firstRoute!, secondRoute!] as const };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("tool calls in several tabs", () => {
  it("runs exactly one handler when two tabs get the same request", async () => {
    const { extension, tabs } = await twoTabs();
    const runs: number[] = [];
    for (const [index, tab] of tabs.entries()) {
      tab.onTool(() => {
        runs.push(index);
        return "done";
      });
    }
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call("call-1") });
    await extension.waitForRequest("claimToolCall", 1);
    await extension.waitForRequest("submitToolResult");
    await Promise.all(tabs.map((tab) => drained(extension, tab)));
    expect(runs).toHaveLength(1);
    const claims = extension.requestsOf("claimToolCall");
    expect(new Set(claims.map((request) => extension.routeOf(request))).size).toBe(2);
    const submits = extension.requestsOf("submitToolResult");
    expect(submits).toHaveLength(1);
    // The tab that submitted is the one whose claim was granted (the first to ask).
    expect(extension.routeOf(submits[0]!)).toBe(extension.routeOf(claims[0]!));
  });

  it("runs the call in the other tab when the claiming tab went away without answering", async () => {
    const { extension, tabs, routes } = await twoTabs();
    const started: number[] = [];
    const signals: AbortSignal[] = [];
    tabs[0].onTool((_args, context) => {
      started.push(0);
      signals.push(context.signal);
      return new Promise(() => {}); // never answers
    });
    tabs[1].onTool(() => {
      started.push(1);
      return "from the second tab";
    });
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call("call-1") });
    await vi.waitFor(() => expect(started).toEqual([0]));
    await extension.waitForRequest("claimToolCall", 1); // the second tab asked and was refused
    extension.dropPort(undefined, routes[0]);
    expect(extension.releaseClaims(SESSION_ID, routes[0])).toBe(1);
    const submit = await extension.waitForRequest("submitToolResult");
    expect(extension.routeOf(submit)).toBe(routes[1]);
    expect(submit.payload).toMatchObject({ toolRequestId: "call-1", outcome: { ok: true, result: "from the second tab" } });
    expect(started).toEqual([0, 1]);
    expect(signals[0]?.aborted).toBe(true);
    expect((signals[0]?.reason as PedelecError | undefined)?.code).toBe("EXTENSION_DISCONNECTED");
  });
});

describe("tool calls in one page", () => {
  it("runs a call once when two handles of the same session see it", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    const handles = [await pedelec.createSession({ provider: "claude" }), await pedelec.resumeSession(SESSION_ID)];
    const runs: number[] = [];
    for (const [index, handle] of handles.entries()) {
      handle.onTool(() => {
        runs.push(index);
        return "done";
      });
    }
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call("call-1") });
    await extension.waitForRequest("submitToolResult");
    await Promise.all(handles.map((handle) => drained(extension, handle)));
    expect(runs).toHaveLength(1);
    expect(extension.requestsOf("claimToolCall")).toHaveLength(1);
  });

  it("does not run a call Core says no longer waits, and reports nothing", async () => {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    const handler = vi.fn(() => "late");
    const errors: string[] = [];
    session.onTool(handler);
    session.onError((error) => errors.push(error.code));
    extension.handle("claimToolCall", () => {
      throw new PedelecError("TOOL_CALL_NOT_PENDING", "already settled");
    });
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call("call-1") });
    await extension.waitForRequest("claimToolCall");
    await drained(extension, session);
    expect(handler).not.toHaveBeenCalled();
    expect(errors).toEqual([]);
    expect(extension.requestsOf("submitToolResult")).toEqual([]);
  });

  it("reports a claim that failed for another reason, and takes the call when Core requests it again", async () => {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    const errors: PedelecError[] = [];
    session.onError((error) => errors.push(error));
    session.onTool(() => "second try");
    extension.handle("claimToolCall", () => {
      throw new PedelecError("NATIVE_CONNECTION_CLOSED", "host went away");
    });
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call("call-1") });
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]?.code).toBe("SUBMIT_TOOL_RESULT_FAILED");
    expect(errors[0]?.details).toMatchObject({ toolRequestId: "call-1", cause: { code: "NATIVE_CONNECTION_CLOSED" } });
    extension.handle("claimToolCall", () => ({ claimed: true }));
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call("call-1") });
    const submit = await extension.waitForRequest("submitToolResult");
    expect(submit.payload).toMatchObject({ toolRequestId: "call-1", outcome: { ok: true, result: "second try" } });
  });

  it("reports a late result Core refused as SUBMIT_TOOL_RESULT_FAILED with its cause, and never runs the call again", async () => {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    const errors: Array<{ error: PedelecError; toolRequestId: string | undefined }> = [];
    session.onError((error, context) => errors.push({ error, toolRequestId: context.toolRequestId }));
    const handler = vi.fn(() => "too late");
    session.onTool(handler);
    extension.handle("submitToolResult", (request, fake) => {
      // Core timed the call out just before the result came: it says so, then refuses the result.
      fake.emit(SESSION_ID, { type: "tool-call-settled", turnId: "turn-1", toolRequestId: toolRequestIdOf(request), outcome: "timed-out" });
      throw new PedelecError("TOOL_TIMEOUT", "the tool call timed out before its result arrived");
    });
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call("call-1") });
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]?.error.code).toBe("SUBMIT_TOOL_RESULT_FAILED");
    expect(errors[0]?.error.details).toMatchObject({ toolRequestId: "call-1", cause: { code: "TOOL_TIMEOUT" } });
    expect(errors[0]?.toolRequestId).toBe("call-1");
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call("call-1") });
    await drained(extension, session);
    expect(handler).toHaveBeenCalledTimes(1);
    expect(extension.requestsOf("claimToolCall")).toHaveLength(1);
    expect(extension.requestsOf("submitToolResult")).toHaveLength(1);
  });
});

describe("the handler's signal", () => {
  async function runningHandler() {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    let signal: AbortSignal | undefined;
    session.onTool((_args, context) => {
      signal = context.signal;
      return new Promise(() => {});
    });
    extension.emit(SESSION_ID, { type: "tool-call-requested", ...call("call-1") });
    await vi.waitFor(() => expect(signal).toBeDefined());
    return { extension, session, signal: () => signal! };
  }

  it("aborts with TURN_CANCELLED when Core settles the call as cancelled", async () => {
    const { extension, signal } = await runningHandler();
    extension.emit(SESSION_ID, { type: "tool-call-settled", turnId: "turn-1", toolRequestId: "call-1", outcome: "cancelled" });
    await vi.waitFor(() => expect(signal().aborted).toBe(true));
    expect((signal().reason as PedelecError).code).toBe("TURN_CANCELLED");
  });

  it("aborts when the call's turn ends, with the turn's error", async () => {
    const { extension, signal } = await runningHandler();
    extension.emit(SESSION_ID, {
      type: "turn-failed",
      turnId: "turn-1",
      turnKind: "user",
      error: { code: "PROVIDER_FAILED", message: "exit 1" },
    });
    await vi.waitFor(() => expect(signal().aborted).toBe(true));
    expect((signal().reason as PedelecError).code).toBe("PROVIDER_FAILED");
  });

  it("aborts when cancel() stops the turn", async () => {
    const { extension, session, signal } = await runningHandler();
    extension.handle("cancelTurn", (_request, fake) => {
      fake.emit(SESSION_ID, { type: "tool-call-settled", turnId: "turn-1", toolRequestId: "call-1", outcome: "cancelled" });
      fake.emit(SESSION_ID, { type: "turn-failed", turnId: "turn-1", turnKind: "user", error: { code: "TURN_CANCELLED", message: "cancelled" } });
      return { cancelled: true };
    });
    await session.cancel();
    await vi.waitFor(() => expect(signal().aborted).toBe(true));
    expect(extension.requestsOf("submitToolResult")).toEqual([]);
  });
});
