import { afterEach, describe, expect, it, vi } from "vitest";
import type { PageRequest } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ToolResultOutcome } from "@pedelec/protocol/requests";
import { defineTool } from "./define-tool.js";
import { Pedelec } from "./pedelec.js";
import { FakeExtension } from "./testing/fake-extension.js";
import type { ToolHandlerContext } from "./types.js";

const SESSION_ID = "session-0001";
const argsSchema = { type: "object", properties: { title: { type: "string" } } } as const;

async function openSession(inline?: (args: unknown) => unknown) {
  const extension = new FakeExtension().install();
  const tools = [
    defineTool({ name: "add_todo", description: "Add a todo.", argsSchema, ...(inline ? { handler: inline } : {}) }),
    defineTool({ name: "list_todos", description: "List todos.", argsSchema }),
  ];
  const session = await new Pedelec().createSession({ skills: { guidance: "", tools } });
  return { extension, session };
}

let callCount = 0;
function requestTool(extension: FakeExtension, toolName: string, args: unknown = {}): string {
  callCount += 1;
  const toolRequestId = `call-${callCount}`;
  extension.emit(SESSION_ID, {
    type: "tool-call-requested",
    turnId: "turn-1",
    toolRequestId,
    toolName,
    args: args as never,
    timeoutMs: 60_000,
  });
  return toolRequestId;
}

async function submitted(extension: FakeExtension, index = 0): Promise<{ toolRequestId: string; outcome: ToolResultOutcome }> {
  const request: PageRequest = await extension.waitForRequest("submitToolResult", index);
  const payload = request.payload as { sessionId: string; toolRequestId: string; outcome: ToolResultOutcome };
  expect(payload.sessionId).toBe(SESSION_ID);
  return payload;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("tool calls", () => {
  it("prefers the named handler, then the inline one, then the generic fallback", async () => {
    const { extension, session } = await openSession(() => "inline");
    const stopNamed = session.onTool("add_todo", () => "named");
    session.onTool(() => "fallback");

    requestTool(extension, "add_todo");
    expect((await submitted(extension, 0)).outcome).toEqual({ ok: true, result: "named" });

    stopNamed();
    requestTool(extension, "add_todo");
    expect((await submitted(extension, 1)).outcome).toEqual({ ok: true, result: "inline" });

    requestTool(extension, "list_todos");
    expect((await submitted(extension, 2)).outcome).toEqual({ ok: true, result: "fallback" });
  });

  it("answers TOOL_HANDLER_NOT_FOUND when no handler fits", async () => {
    const { extension } = await openSession();
    const toolRequestId = requestTool(extension, "list_todos");
    const { toolRequestId: answered, outcome } = await submitted(extension);
    expect(answered).toBe(toolRequestId);
    expect(outcome).toMatchObject({ ok: false, error: { code: "TOOL_HANDLER_NOT_FOUND" } });
  });

  it("claims the call, then gives the handler its args and a context naming the call, its turn and its event", async () => {
    const { extension, session } = await openSession();
    const statuses: string[] = [];
    session.onStatus((status) => statuses.push(status));
    extension.emit(SESSION_ID, { type: "turn-started", turnId: "turn-1", turnKind: "user" });
    let received: { args: unknown; context: ToolHandlerContext<"add_todo"> } | undefined;
    session.onTool("add_todo", (args, context) => {
      received = { args, context };
      return { added: true };
    });
    const toolRequestId = requestTool(extension, "add_todo", { title: "milk" });
    expect((await submitted(extension)).outcome).toEqual({ ok: true, result: { added: true } });
    const claim = await extension.waitForRequest("claimToolCall");
    expect(claim.payload).toEqual({ sessionId: SESSION_ID, toolRequestId });
    // The claim went out before the result.
    expect(extension.requests.indexOf(claim)).toBeLessThan(extension.requests.findIndex((request) => request.type === "submitToolResult"));
    expect(received?.args).toEqual({ title: "milk" });
    expect(received?.context).toMatchObject({
      toolName: "add_todo",
      toolRequestId,
      turnId: "turn-1",
      turnKind: "user",
      sessionId: SESSION_ID,
      provider: "claude",
      source: "core",
      seq: 2,
    });
    expect(typeof received?.context.eventEmittedAt).toBe("string");
    expect(received?.context.signal.aborted).toBe(false);
    // Waiting for the page is Core's status to report, not the SDK's to guess.
    expect(statuses).toEqual([]);
    extension.emit(SESSION_ID, { type: "status-changed", status: "waiting_tool_result", turnId: "turn-1" });
    await vi.waitFor(() => expect(statuses).toEqual(["waiting_tool_result"]));
  });

  it("turns a throwing handler into a TOOL_HANDLER_ERROR result", async () => {
    const { extension, session } = await openSession();
    session.onTool("add_todo", () => {
      throw new Error("list is locked");
    });
    session.onTool("list_todos", async () => Promise.reject(new Error("offline")));
    requestTool(extension, "add_todo");
    const first = (await submitted(extension, 0)).outcome;
    expect(first).toMatchObject({ ok: false, error: { code: "TOOL_HANDLER_ERROR" } });
    expect(!first.ok && first.error.message).toMatch(/list is locked/);
    requestTool(extension, "list_todos");
    const second = (await submitted(extension, 1)).outcome;
    expect(!second.ok && second.error.message).toMatch(/offline/);
  });

  it("turns a non-JSON result into a TOOL_RESULT_INVALID result", async () => {
    const { extension, session } = await openSession();
    const results: unknown[] = [undefined, () => 1, 1n, Number.NaN, new Map(), { nested: Number.POSITIVE_INFINITY }];
    let next = 0;
    session.onTool(() => results[next++]);
    for (let index = 0; index < results.length; index += 1) {
      requestTool(extension, "add_todo");
      const { outcome } = await submitted(extension, index);
      expect(outcome).toMatchObject({ ok: false, error: { code: "TOOL_RESULT_INVALID" } });
    }
  });

  it("aborts the handler's signal and submits nothing when Core settles the call by timeout", async () => {
    const { extension, session } = await openSession();
    let release: (value: unknown) => void = () => {};
    let signal: AbortSignal | undefined;
    session.onTool("add_todo", (_args, context) => {
      signal = context.signal;
      return new Promise((resolve) => {
        release = resolve;
      });
    });
    const toolRequestId = requestTool(extension, "add_todo");
    await vi.waitFor(() => expect(signal).toBeDefined());
    extension.emit(SESSION_ID, { type: "tool-call-settled", turnId: "turn-1", toolRequestId, outcome: "timed-out" });
    await vi.waitFor(() => expect(signal?.aborted).toBe(true));
    expect((signal?.reason as PedelecError | undefined)?.code).toBe("TOOL_TIMEOUT");
    release({ late: true });
    // A later call's submission proves the first one's would have come before it.
    session.onTool("list_todos", () => "next");
    requestTool(extension, "list_todos");
    const { outcome } = await submitted(extension, 0);
    expect(outcome).toEqual({ ok: true, result: "next" });
    expect(extension.requestsOf("submitToolResult")).toHaveLength(1);
  });

  it("aborts running handlers when the session ends", async () => {
    const { extension, session } = await openSession();
    let signal: AbortSignal | undefined;
    session.onTool("add_todo", (_args, context) => {
      signal = context.signal;
      return new Promise(() => {});
    });
    requestTool(extension, "add_todo");
    await vi.waitFor(() => expect(signal).toBeDefined());
    await session.end();
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as PedelecError | undefined)?.code).toBe("SESSION_ENDED");
  });

  it("reports SUBMIT_TOOL_RESULT_FAILED through onError when the result cannot be delivered", async () => {
    const { extension, session } = await openSession();
    extension.handle("submitToolResult", () => {
      throw new PedelecError("NATIVE_CONNECTION_CLOSED", "host went away");
    });
    const errors: Array<{ error: PedelecError; source: string; toolRequestId: string | undefined }> = [];
    session.onError((error, context) => errors.push({ error, source: context.source, toolRequestId: context.toolRequestId }));
    session.onTool(() => "result");
    const toolRequestId = requestTool(extension, "add_todo");
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]?.error.code).toBe("SUBMIT_TOOL_RESULT_FAILED");
    expect(errors[0]?.error.details).toMatchObject({ toolRequestId, cause: { code: "NATIVE_CONNECTION_CLOSED" } });
    expect(errors[0]).toMatchObject({ source: "sdk", toolRequestId });
  });

  it("runs a replayed call only once", async () => {
    const { extension, session } = await openSession();
    const handler = vi.fn(() => new Promise(() => {}));
    session.onTool(handler);
    const event = {
      type: "tool-call-requested" as const,
      turnId: "turn-1",
      toolRequestId: "call-dup",
      toolName: "add_todo",
      args: {},
      timeoutMs: 1000,
    };
    extension.emit(SESSION_ID, event, 10);
    extension.emit(SESSION_ID, event, 11); // same call, newer seq (another route relayed it)
    const deltas: string[] = [];
    session.onChatDelta((delta) => deltas.push(delta));
    // Events arrive in order, so once this marker is seen both tool events were handled.
    extension.emit(SESSION_ID, { type: "chat-delta", turnId: "turn-1", messageId: "m", delta: "marker" }, 12);
    await vi.waitFor(() => expect(deltas).toEqual(["marker"]));
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it("refuses a malformed onTool registration", async () => {
    const { session } = await openSession();
    const untyped = session.onTool.bind(session) as (...args: unknown[]) => unknown;
    expect(() => untyped("add_todo")).toThrow(PedelecError);
    expect(() => untyped(5, () => 1)).toThrow(PedelecError);
  });
});
