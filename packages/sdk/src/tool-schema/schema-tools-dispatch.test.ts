import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import * as v from "valibot";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { PageRequest } from "@pedelec/protocol/page-wire";
import type { ToolResultOutcome } from "@pedelec/protocol/requests";
import type { PendingToolCall } from "@pedelec/protocol/session-events";
import { defineTool } from "../define-tool.js";
import { Pedelec } from "../pedelec.js";
import { errorOf } from "../testing/error-of.js";
import { FakeExtension, sessionInfo } from "../testing/fake-extension.js";
import type { ToolDefinition } from "../types.js";

const SESSION_ID = "session-0001";

let callCount = 0;
function requestTool(extension: FakeExtension, toolName: string, args: unknown): string {
  callCount += 1;
  const toolRequestId = `call-${callCount}`;
  extension.emit(SESSION_ID, { type: "tool-call-requested", turnId: "turn-1", toolRequestId, toolName, args: args as never, timeoutMs: 60_000 });
  return toolRequestId;
}

/** The outcome the page submitted for one call (waits for it, up to the fake's deadline). */
async function outcomeOf(extension: FakeExtension, toolRequestId: string): Promise<ToolResultOutcome> {
  for (let index = 0; ; index += 1) {
    const request: PageRequest = await extension.waitForRequest("submitToolResult", index);
    const payload = request.payload as { toolRequestId: string; outcome: ToolResultOutcome };
    if (payload.toolRequestId === toolRequestId) return payload.outcome;
  }
}

async function openSession<const TTools extends readonly ToolDefinition[]>(tools: TTools) {
  const extension = new FakeExtension().install();
  const session = await new Pedelec().createSession({ skills: { guidance: "", tools } });
  return { extension, session };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

const noteArgs = z.object({
  title: z
    .string()
    .min(1)
    .refine((title) => title.trim().length > 0, "must not be blank"),
  priority: z.int().min(1).max(5).default(3),
  count: z
    .string()
    .regex(/^[0-9]+$/)
    .transform(Number),
});

describe("tools defined with a Standard Schema", () => {
  it("sends only the converted schema, and registers the tool's own handler with the schema's output as arguments", async () => {
    const received: unknown[] = [];
    const addNote = defineTool({
      name: "add_note",
      description: "Add a note.",
      args: noteArgs,
      handler: (args) => {
        received.push(args);
        return { id: `${args.title}-${args.priority}-${args.count + 1}` };
      },
    });
    const { extension, session } = await openSession([addNote]);
    const { payload } = await extension.waitForRequest("createSession");
    const [entry] = (payload as { skills: { tools: Array<Record<string, unknown>> } }).skills.tools;
    expect(Object.keys(entry!).sort()).toEqual(["argsSchema", "description", "name"]);
    expect(entry!.argsSchema).toMatchObject({ type: "object", required: ["title", "count"] });

    const toolRequestId = requestTool(extension, "add_note", { title: "Milk", count: "41" });
    expect(await outcomeOf(extension, toolRequestId)).toEqual({ ok: true, result: { id: "Milk-3-42" } });
    expect(received).toEqual([{ title: "Milk", priority: 3, count: 41 }]);
    expect(session.getStatus()).toBe("idle");
  });

  it("answers TOOL_ARGS_INVALID, naming the property and the problem, and runs no handler", async () => {
    const handler = vi.fn(() => ({ ok: true }));
    const { extension, session } = await openSession([defineTool({ name: "add_note", description: "Add a note.", args: noteArgs, handler })]);
    const named = vi.fn(() => ({ ok: true }));
    const fallback = vi.fn(() => ({ ok: true }));
    session.onTool("add_note", named);
    session.onTool(fallback);

    // Core's JSON subset cannot see the refinement; the page's check does.
    const blank = requestTool(extension, "add_note", { title: "   ", count: "1" });
    const outcome = await outcomeOf(extension, blank);
    expect(outcome).toMatchObject({ ok: false, error: { code: "TOOL_ARGS_INVALID" } });
    const error = (outcome as { error: { message: string; details: { issues: unknown[]; issueCount: number } } }).error;
    expect(error.message).toBe("arguments for add_note do not match its schema: title: must not be blank");
    expect(error.details).toEqual({ issues: [{ code: "invalid", path: "title", message: "must not be blank" }], issueCount: 1 });

    const wrongTypes = requestTool(extension, "add_note", { title: 7, count: "x", priority: 9 });
    const several = await outcomeOf(extension, wrongTypes);
    expect(several).toMatchObject({ ok: false, error: { code: "TOOL_ARGS_INVALID", details: { issueCount: 3 } } });
    expect((several as { error: { message: string } }).error.message).toMatch(/title: .*; priority: .*; count: /);
    expect([handler, named, fallback].map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0]);
  });

  it("waits for an async check before the handler runs", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const checked: string[] = [];
    const args = z.object({
      email: z.string().refine(async (email) => {
        checked.push(email);
        await gate;
        return !email.endsWith("@blocked.test");
      }, "is blocked"),
    });
    const handler = vi.fn((input: { email: string }) => ({ invited: input.email }));
    const { extension } = await openSession([defineTool({ name: "invite", description: "Invite.", args, handler })]);

    const allowed = requestTool(extension, "invite", { email: "ann@example.test" });
    const blocked = requestTool(extension, "invite", { email: "bob@blocked.test" });
    // zod tries a synchronous pass first, so a value may be seen twice.
    await vi.waitFor(() => expect(new Set(checked)).toEqual(new Set(["ann@example.test", "bob@blocked.test"])));
    expect(handler).not.toHaveBeenCalled();
    expect(extension.requestsOf("submitToolResult")).toEqual([]);
    release();
    expect(await outcomeOf(extension, allowed)).toEqual({ ok: true, result: { invited: "ann@example.test" } });
    expect(await outcomeOf(extension, blocked)).toMatchObject({
      ok: false,
      error: { code: "TOOL_ARGS_INVALID", message: "arguments for invite do not match its schema: email: is blocked" },
    });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it("runs no handler for a call settled while its async check ran, and submits nothing", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let checking = false;
    const args = z.object({
      title: z.string().refine(async () => {
        checking = true;
        await gate;
        return true;
      }),
    });
    const handler = vi.fn(() => ({ ok: true }));
    const { extension } = await openSession([defineTool({ name: "slow", description: "Slow.", args, handler })]);
    const toolRequestId = requestTool(extension, "slow", { title: "x" });
    await vi.waitFor(() => expect(checking).toBe(true));
    extension.emit(SESSION_ID, { type: "tool-call-settled", turnId: "turn-1", toolRequestId, outcome: "timed-out" });
    await new Promise((resolve) => setTimeout(resolve, 0));
    release();
    // A later call fences the check: once it is answered, the settled one would have been too.
    const later = requestTool(extension, "slow", { title: "y" });
    expect(await outcomeOf(extension, later)).toEqual({ ok: true, result: { ok: true } });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(extension.requestsOf("submitToolResult")).toHaveLength(1);
  });

  it("answers TOOL_HANDLER_ERROR when the schema's own check throws", async () => {
    const args = z.object({
      title: z.string().refine(() => {
        throw new Error("lookup service down");
      }),
    });
    const { extension } = await openSession([defineTool({ name: "fragile", description: "Fragile.", args, handler: () => "never" })]);
    const toolRequestId = requestTool(extension, "fragile", { title: "x" });
    expect(await outcomeOf(extension, toolRequestId)).toEqual({
      ok: false,
      error: { code: "TOOL_HANDLER_ERROR", message: 'Checking the arguments of tool "fragile" failed: lookup service down' },
    });
  });

  it("lets onTool replace the tool's own handler, which comes back when that one is unsubscribed", async () => {
    const { extension, session } = await openSession([
      defineTool({ name: "add_note", description: "Add a note.", args: noteArgs, handler: () => "own" }),
    ]);
    const stop = session.onTool("add_note", (args) => `named ${args.count}`);
    const first = requestTool(extension, "add_note", { title: "a", count: "7" });
    expect(await outcomeOf(extension, first)).toEqual({ ok: true, result: "named 7" });
    stop();
    const second = requestTool(extension, "add_note", { title: "a", count: "7" });
    expect(await outcomeOf(extension, second)).toEqual({ ok: true, result: "own" });
  });

  it("checks valibot and arktype tools with their own schemas", async () => {
    const valibotTool = defineTool({
      name: "rate",
      description: "Rate.",
      args: toStandardJsonSchema(v.object({ stars: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(5)) })),
      handler: (args) => ({ stars: args.stars }),
    });
    const arktypeTool = defineTool({
      name: "tag",
      description: "Tag.",
      args: type({ label: "/^[a-z]+$/" }),
      handler: (args) => ({ label: args.label }),
    });
    const { extension } = await openSession([valibotTool, arktypeTool]);
    expect(await outcomeOf(extension, requestTool(extension, "rate", { stars: 4 }))).toEqual({ ok: true, result: { stars: 4 } });
    expect(await outcomeOf(extension, requestTool(extension, "rate", { stars: 4.5 }))).toMatchObject({
      ok: false,
      error: { code: "TOOL_ARGS_INVALID", message: expect.stringMatching(/^arguments for rate do not match its schema: stars: /) },
    });
    expect(await outcomeOf(extension, requestTool(extension, "tag", { label: "urgent" }))).toEqual({ ok: true, result: { label: "urgent" } });
    expect(await outcomeOf(extension, requestTool(extension, "tag", { label: "Urgent" }))).toMatchObject({
      ok: false,
      error: { code: "TOOL_ARGS_INVALID", message: expect.stringMatching(/^arguments for tag do not match its schema: label: /) },
    });
  });
});

describe("tools defined with argsSchema", () => {
  it("are checked in the page against the JSON subset too", async () => {
    const handler = vi.fn(() => ({ ok: true }));
    const { extension } = await openSession([
      defineTool({
        name: "add_todo",
        description: "Add a todo.",
        argsSchema: { type: "object", properties: { title: { type: "string", minLength: 1 } }, required: ["title"], additionalProperties: false },
        handler,
      }),
    ]);
    expect(await outcomeOf(extension, requestTool(extension, "add_todo", { title: "Milk" }))).toEqual({ ok: true, result: { ok: true } });
    const invalid = await outcomeOf(extension, requestTool(extension, "add_todo", { title: "", done: true }));
    expect(invalid).toMatchObject({
      ok: false,
      error: {
        code: "TOOL_ARGS_INVALID",
        message: "arguments for add_todo do not match its schema: title: must have at least 1 characters; done: must not have additional properties",
      },
    });
    expect(handler).toHaveBeenCalledTimes(1);
  });
});

describe("resumeSession({ tools })", () => {
  const pending = (toolRequestId: string, args: unknown): PendingToolCall => ({
    turnId: "turn-1",
    toolRequestId,
    toolName: "add_note",
    args: args as never,
    timeoutMs: 60_000,
  });

  it("registers the tools' own handlers and checks, for the calls still waiting too", async () => {
    const extension = new FakeExtension().install();
    extension.handle("resumeSession", () =>
      sessionInfo({
        status: "waiting_tool_result",
        pendingToolCalls: [pending("call-a", { title: "Milk", count: "1" }), pending("call-b", { title: " ", count: "1" })],
      }),
    );
    const addNote = defineTool({ name: "add_note", description: "Add a note.", args: noteArgs, handler: (args) => ({ saved: args.title }) });
    await new Pedelec().resumeSession(SESSION_ID, { tools: [addNote] });
    expect(await outcomeOf(extension, "call-a")).toEqual({ ok: true, result: { saved: "Milk" } });
    expect(await outcomeOf(extension, "call-b")).toMatchObject({ ok: false, error: { code: "TOOL_ARGS_INVALID" } });
    // Nothing about the tools is sent on a resume.
    expect((await extension.waitForRequest("resumeSession")).payload).toEqual({ sessionId: SESSION_ID });
  });

  it("refuses invalid tools before sending anything", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    const badName = { name: "1bad", description: "d", argsSchema: { type: "object" } } as unknown as ToolDefinition;
    expect(await errorOf(pedelec.resumeSession(SESSION_ID, { tools: [badName] }))).toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringMatching(/^Invalid resumeSession tools: tools\[0\]\.name: /),
    });
    expect(await errorOf(pedelec.resumeSession(SESSION_ID, { tools: "add_note" as never }))).toMatchObject({ code: "INVALID_INPUT" });
    expect(extension.requestsOf("resumeSession")).toEqual([]);
  });
});
