import { toJsonSchema, toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import * as v from "valibot";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  defineTool,
  type PedelecError,
  type ApprovalStatus,
  type AssetEntry,
  type AssetReadKind,
  type AssetUploadOptions,
  type AssetUploadProgress,
  type JsonValue,
  type Pedelec,
  type PedelecEventContext,
  type PedelecRunOptions,
  type PedelecRunResult,
  type PedelecSession,
  type PedelecAvailability,
  type PedelecSettings,
  type ProviderAvailability,
  type ResumeSessionOptions,
  type SendTextOptions,
  type SessionEndReason,
  type SessionStatus,
  type StandardSchemaToolDefinition,
  type TokenUsage,
  type ToolArgsMap,
  type ToolArgsOf,
  type ToolDefinition,
  type ToolHandler,
  type TurnKind,
  type ChatMessage,
  type CreateSessionRequestOptions,
} from "./index.js";
import type { ScriptRunResult } from "@pedelec/protocol/script-run";
import type { AssetEntry as ProtocolAssetEntry } from "@pedelec/protocol/assets";
import type { PageRequestResult } from "@pedelec/protocol/page-wire";
import type { ProviderStatus, PublicSettings } from "@pedelec/protocol/requests";
import type { SessionEventOf } from "@pedelec/protocol/session-events";

declare const pedelec: Pedelec;

const addTodo = defineTool({
  name: "add_todo",
  description: "Add a todo.",
  argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
  handler: (args, context) => {
    expectTypeOf(context.toolName).toEqualTypeOf<"add_todo">();
    expectTypeOf(args).toBeUnknown();
    return { ok: true };
  },
});
const listTodos = defineTool({
  name: "list_todos",
  description: "List todos.",
  argsSchema: { type: "object", properties: { done: { type: "boolean" } }, required: ["done"] } as const,
});

describe("defineTool", () => {
  it("keeps the literal name", () => {
    expectTypeOf(addTodo.name).toEqualTypeOf<"add_todo">();
    expectTypeOf(listTodos).toEqualTypeOf<ToolDefinition<"list_todos">>();
    expectTypeOf(addTodo).toExtend<ToolDefinition>();
  });

  it("rejects a definition without an object root schema", () => {
    // @ts-expect-error -- the root of argsSchema must be an object schema
    defineTool({ name: "bad", description: "x", argsSchema: { type: "string" } });
  });
});

describe("createSession", () => {
  it("carries the tool names into the session type", async () => {
    const session = await pedelec.createSession({ provider: "claude", skills: { guidance: "", tools: [addTodo, listTodos] } });
    expectTypeOf(session).toEqualTypeOf<PedelecSession<"add_todo" | "list_todos">>();
    session.onTool("add_todo", (_args, context) => {
      expectTypeOf(context.toolName).toEqualTypeOf<"add_todo">();
      expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>();
      return null;
    });
    session.onTool("list_todos", () => []);
    // @ts-expect-error -- not a tool of this session
    session.onTool("unknownName", () => null);
    session.onTool((_args, context) => context.toolName);
  });

  it("knows no tool names without skills", async () => {
    const session = await pedelec.createSession();
    // @ts-expect-error -- the session declares no tools
    session.onTool("add_todo", () => null);
  });

  it("rejects a model without a provider", () => {
    // @ts-expect-error -- model needs an explicit provider
    void pedelec.createSession({ model: "gpt-5" });
    // @ts-expect-error -- not a provider code
    void pedelec.createSession({ provider: "gpt" });
    void pedelec.createSession({ provider: "codex", model: "gpt-5", effortLevel: "low", access: "sandbox" });
    void pedelec.createSession({ effortLevel: "high", workspace: { path: "/work/app" }, autoEndOnDisconnect: false });
    void pedelec.createSession({ provider: "codex", model: "gpt-5.5", effort: "xhigh" });
    // @ts-expect-error -- effort requires a model
    void pedelec.createSession({ provider: "claude", effort: "max" });
    // @ts-expect-error -- and a provider
    void pedelec.createSession({ model: "opus", effort: "max" });
    // @ts-expect-error -- effortLevel cannot be combined with effort
    void pedelec.createSession({ provider: "claude", model: "opus", effort: "max", effortLevel: "low" });
    // @ts-expect-error -- not an effort level
    void pedelec.createSession({ provider: "claude", model: "opus", effort: "ultra" });
  });
});

describe("PedelecSession", () => {
  it("types its callbacks and fields", async () => {
    const session = await pedelec.resumeSession("session-0001");
    expectTypeOf(session.model).toEqualTypeOf<string | undefined>();
    expectTypeOf(session.workspace.path).toEqualTypeOf<string>();
    expectTypeOf(session.workspace.managed).toEqualTypeOf<boolean>();
    expectTypeOf(session.getStatus()).toEqualTypeOf<SessionStatus>();
    expectTypeOf(session.sendText("hi")).toEqualTypeOf<Promise<void>>();
    expectTypeOf(session.onChatDelta((delta: string, context: PedelecEventContext) => void [delta, context])).toEqualTypeOf<() => void>();
    session.onChat((message) => expectTypeOf(message).toEqualTypeOf<{ messageId: string; text: string }>());
    session.onError((error) => expectTypeOf(error).toEqualTypeOf<PedelecError>());
    session.onEnded((context) => expectTypeOf(context.source).toEqualTypeOf<"core" | "sdk">());
    session.onTool("anything", () => null); // a resumed session knows no names unless told
  });

  it("types the token usage: read-only counts, each optional", async () => {
    const session = await pedelec.resumeSession("session-0001");
    expectTypeOf(session.usage).toEqualTypeOf<TokenUsage>();
    expectTypeOf<TokenUsage>().toEqualTypeOf<{
      readonly inputTokens?: number;
      readonly outputTokens?: number;
      readonly cachedInputTokens?: number;
      readonly totalTokens?: number;
    }>();
    const stop = session.onUsage((usage, context) => {
      expectTypeOf(usage).toEqualTypeOf<TokenUsage>();
      expectTypeOf(context.turnUsage).toEqualTypeOf<TokenUsage | undefined>();
      expectTypeOf(context.seq).toEqualTypeOf<number | undefined>();
    });
    expectTypeOf(stop).toEqualTypeOf<() => void>();
    // @ts-expect-error -- the total is Core's to change
    session.usage = {};
    // @ts-expect-error -- and so are its counts
    session.usage.totalTokens = 1;
  });
});

describe("durable sessions", () => {
  it("takes afterSeq and a signal when resuming", async () => {
    const controller = new AbortController();
    const session = await pedelec.resumeSession<"add_todo">("session-0001", { afterSeq: 12, signal: controller.signal });
    expectTypeOf(session).toEqualTypeOf<PedelecSession<"add_todo">>();
    expectTypeOf(session.lastSeq).toEqualTypeOf<number>();
    void pedelec.resumeSession("session-0001", {});
    const options: ResumeSessionOptions = { afterSeq: session.lastSeq };
    void pedelec.resumeSession("session-0001", options);
    // @ts-expect-error -- afterSeq is a seq number
    void pedelec.resumeSession("session-0001", { afterSeq: "12" });
    // @ts-expect-error -- not an option of resumeSession
    void pedelec.resumeSession("session-0001", { replay: true });
  });

  it("takes a signal when creating a session and when sending text", async () => {
    const controller = new AbortController();
    const session = await pedelec.createSession({ provider: "claude", skills: { guidance: "", tools: [addTodo] } }, { signal: controller.signal });
    expectTypeOf(session).toEqualTypeOf<PedelecSession<"add_todo">>();
    void pedelec.createSession(undefined, { signal: controller.signal });
    const createOptions: CreateSessionRequestOptions = {};
    void pedelec.createSession({}, createOptions);
    // @ts-expect-error -- a signal is an AbortSignal
    void pedelec.createSession({}, { signal: true });
    expectTypeOf(session.sendText("hi", { signal: controller.signal })).toEqualTypeOf<Promise<void>>();
    const sendOptions: SendTextOptions = { signal: AbortSignal.timeout(1000) };
    void session.sendText("hi", sendOptions);
    // @ts-expect-error -- a signal is an AbortSignal
    void session.sendText("hi", { signal: controller });
  });

  it("prepares a session with one shared promise", async () => {
    const session = await pedelec.createSession();
    expectTypeOf(session.prepare()).toEqualTypeOf<Promise<void>>();
    // @ts-expect-error -- prepare takes no input
    void session.prepare("warm up");
  });

  it("reports availability part by part", async () => {
    const availability = await pedelec.checkAvailability();
    expectTypeOf(availability).toEqualTypeOf<PedelecAvailability>();
    expectTypeOf(availability.available).toEqualTypeOf<boolean>();
    expectTypeOf(availability.extension).toEqualTypeOf<{ available: boolean }>();
    expectTypeOf(availability.approval).toEqualTypeOf<{ approved: boolean; origin: string }>();
    expectTypeOf(availability.desktop).toEqualTypeOf<{ available: boolean; launchAttempted: boolean }>();
    expectTypeOf(availability.error).toEqualTypeOf<PedelecError | undefined>();
  });

  it("carries the turn kind, the seq and the end reason in contexts", async () => {
    const session = await pedelec.createSession({ skills: { guidance: "", tools: [addTodo] } });
    session.onEnded((context) => expectTypeOf(context.endReason).toEqualTypeOf<SessionEndReason | undefined>());
    expectTypeOf<SessionEndReason>().toEqualTypeOf<"requested" | "disconnected" | "expired" | "full-access-revoked">();
    session.onStatus((_status, context) => expectTypeOf(context.turnKind).toEqualTypeOf<TurnKind | undefined>());
    session.onTool("add_todo", (_args, context) => {
      expectTypeOf(context.turnKind).toEqualTypeOf<TurnKind | undefined>();
      expectTypeOf(context.seq).toEqualTypeOf<number | undefined>();
      expectTypeOf(context.provider).toEqualTypeOf<PedelecSession["provider"]>();
      expectTypeOf(context.source).toEqualTypeOf<"core" | "sdk">();
      expectTypeOf(context.toolRequestId).toEqualTypeOf<string>();
      expectTypeOf(context.turnId).toEqualTypeOf<string>();
      return null;
    });
  });
});

describe("types derived from the protocol", () => {
  it("match the wire shapes they present", () => {
    expectTypeOf<ProviderAvailability>().toEqualTypeOf<ProviderStatus>();
    expectTypeOf<PedelecSettings>().toEqualTypeOf<PublicSettings>();
    expectTypeOf<ChatMessage>().toEqualTypeOf<Pick<SessionEventOf<"chat-completed">, "messageId" | "text">>();
    expectTypeOf<Omit<ApprovalStatus, "installed">>().toEqualTypeOf<Omit<PageRequestResult<"getApprovalStatus">, "installed">>();
    expectTypeOf<ApprovalStatus["installed"]>().toEqualTypeOf<boolean>();
  });
});

describe("Pedelec", () => {
  it("types known requests and approval status", async () => {
    expectTypeOf(await pedelec.getApprovalStatus()).toEqualTypeOf<ApprovalStatus>();
    expectTypeOf((await pedelec.request("endSession", { sessionId: "session-0001" })).ended).toEqualTypeOf<boolean>();
    expectTypeOf(await pedelec.request<{ custom: number }>("someFutureRequest")).toEqualTypeOf<{ custom: number }>();
  });
});

describe("workspace.run", () => {
  it("takes an entry or a source, with the shared options", async () => {
    const session = await pedelec.resumeSession("session-0001");
    const controller = new AbortController();
    expectTypeOf(session.workspace.run({ entry: "scripts/report.ts" })).toEqualTypeOf<Promise<PedelecRunResult>>();
    void session.workspace.run({ source: "console.log(1)", args: ["a"], timeoutMs: 5_000, access: "full", signal: controller.signal });
    const args = ["a", "b"] as const;
    void session.workspace.run({ entry: "a.ts", args, importMap: "import_map.json", access: "sandbox" });
    const options: PedelecRunOptions = { entry: "a.ts" };
    void session.workspace.run(options);
  });

  it("refuses both entry and source, neither of them, and unknown access modes", async () => {
    const session = await pedelec.resumeSession("session-0001");
    // @ts-expect-error -- exactly one of entry and source
    void session.workspace.run({ entry: "a.ts", source: "console.log(1)" });
    // @ts-expect-error -- one of entry and source is needed
    void session.workspace.run({ args: ["a"] });
    // @ts-expect-error -- not an access mode
    void session.workspace.run({ entry: "a.ts", access: "root" });
    // @ts-expect-error -- arguments are strings
    void session.workspace.run({ entry: "a.ts", args: [1] });
  });

  it("resolves with the protocol's run result, field by field", async () => {
    const session = await pedelec.resumeSession("session-0001");
    const result = await session.workspace.run({ entry: "a.ts" });
    expectTypeOf(result).toEqualTypeOf<PedelecRunResult>();
    expectTypeOf<PedelecRunResult>().toExtend<ScriptRunResult>();
    expectTypeOf<ScriptRunResult>().toExtend<PedelecRunResult>();
    expectTypeOf(result.exitCode).toEqualTypeOf<number | null>();
    expectTypeOf(result.termination).toEqualTypeOf<"exited" | "timeout" | "cancelled" | "memory-limit">();
    expectTypeOf(result.processTreeCleanupError).toEqualTypeOf<string | undefined>();
  });
});

describe("assets", () => {
  it("uploads a File or a Blob and resolves with the asset path", async () => {
    const session = await pedelec.resumeSession("session-0001");
    const controller = new AbortController();
    const file = new File(["milk"], "list.txt");
    expectTypeOf(session.uploadAsset(file)).toEqualTypeOf<Promise<string>>();
    void session.uploadAsset(new Blob(["x"]), "/inbox/x.bin");
    void session.uploadAsset(file, undefined, {
      signal: controller.signal,
      onProgress: (progress) => expectTypeOf(progress).toEqualTypeOf<AssetUploadProgress>(),
    });
    const options: AssetUploadOptions = { onProgress: ({ loadedBytes, totalBytes }) => void [loadedBytes, totalBytes] };
    void session.uploadAsset(file, "/a.txt", options);
    // @ts-expect-error -- a path is a string
    void session.uploadAsset(file, 42);
    // @ts-expect-error -- uploads take a Blob or a File, not text
    void session.uploadAsset("milk", "/a.txt");
  });

  it("lists entries shaped like the protocol's", async () => {
    const session = await pedelec.resumeSession("session-0001");
    expectTypeOf(await session.listAssets()).toEqualTypeOf<AssetEntry[]>();
    expectTypeOf<AssetEntry>().toEqualTypeOf<ProtocolAssetEntry>();
  });

  it("types readAsset by the kind asked for", async () => {
    const session = await pedelec.resumeSession("session-0001");
    expectTypeOf(session.readAsset("/a.txt", "text")).toEqualTypeOf<Promise<string>>();
    expectTypeOf(session.readAsset("/a.json", "json")).toEqualTypeOf<Promise<JsonValue>>();
    expectTypeOf(session.readAsset("/a.png", "file", { signal: new AbortController().signal })).toEqualTypeOf<Promise<File>>();
    const kind = "text" as AssetReadKind;
    expectTypeOf(session.readAsset("/a", kind)).toEqualTypeOf<Promise<string | JsonValue | File>>();
    // @ts-expect-error -- not a read kind
    void session.readAsset("/a.bin", "binary");
    // @ts-expect-error -- the kind is required
    void session.readAsset("/a.txt");
  });
});

const addNote = defineTool({
  name: "add_note",
  description: "Add a note.",
  args: z.object({ title: z.string().min(1), body: z.string().optional(), count: z.string().transform(Number) }),
  handler: (args, context) => {
    expectTypeOf(args).toEqualTypeOf<{ title: string; body?: string | undefined; count: number }>();
    expectTypeOf(context.toolName).toEqualTypeOf<"add_note">();
    return { id: args.title };
  },
});
const rateValibot = defineTool({
  name: "rate",
  description: "Rate.",
  args: toStandardJsonSchema(v.object({ stars: v.pipe(v.number(), v.integer()), comment: v.optional(v.string()) })),
  handler: (args) => {
    expectTypeOf(args).toEqualTypeOf<{ stars: number; comment?: string | undefined }>();
    return null;
  },
});
const valibotSchema = v.object({ label: v.picklist(["red", "green"]) });
const labelValibot = defineTool({
  name: "label",
  description: "Label.",
  args: valibotSchema,
  jsonSchema: toJsonSchema(valibotSchema, { typeMode: "input" }),
});
const tagArktype = defineTool({
  name: "tag",
  description: "Tag.",
  args: type({ label: "string", "weight?": "number.integer" }),
  handler: (args) => {
    expectTypeOf(args).toEqualTypeOf<{ label: string; weight?: number }>();
    return null;
  },
});

describe("Standard Schema tools", () => {
  it("type the arguments from zod, valibot and arktype schemas", () => {
    expectTypeOf(addNote).toEqualTypeOf<ToolDefinition<"add_note", { title: string; body?: string | undefined; count: number }>>();
    expectTypeOf(addNote).toEqualTypeOf<StandardSchemaToolDefinition<"add_note", { title: string; body?: string | undefined; count: number }>>();
    expectTypeOf<ToolArgsOf<typeof addNote>>().toEqualTypeOf<{ title: string; body?: string | undefined; count: number }>();
    expectTypeOf<ToolArgsOf<typeof rateValibot>>().toEqualTypeOf<{ stars: number; comment?: string | undefined }>();
    expectTypeOf<ToolArgsOf<typeof labelValibot>>().toEqualTypeOf<{ label: "red" | "green" }>();
    expectTypeOf<ToolArgsOf<typeof tagArktype>>().toEqualTypeOf<{ label: string; weight?: number }>();
    expectTypeOf<ToolArgsOf<typeof addTodo>>().toBeUnknown();
    for (const tool of [addNote, rateValibot, labelValibot, tagArktype]) expectTypeOf(tool).toExtend<ToolDefinition>();
  });

  it("refuses a handler whose arguments do not fit the schema", () => {
    // @ts-expect-error -- title is a string
    defineTool({ name: "wrong", description: "Wrong.", args: z.object({ title: z.string() }), handler: (args: { title: number }) => args.title });
  });

  it("takes exactly one of args and argsSchema, and args must be a Standard Schema", () => {
    // @ts-expect-error -- not both
    defineTool({ name: "both", description: "Both.", args: z.object({}), argsSchema: { type: "object" } });
    // @ts-expect-error -- args is a Standard Schema, not a JSON Schema
    defineTool({ name: "json", description: "JSON.", args: { type: "object" } });
    // @ts-expect-error -- one of them is needed
    defineTool({ name: "none", description: "None." });
  });

  it("type each onTool handler's arguments from its tool, and keep argsSchema tools unknown", async () => {
    const session = await pedelec.createSession({ skills: { guidance: "", tools: [addNote, addTodo, tagArktype] } });
    expectTypeOf(session).toEqualTypeOf<
      PedelecSession<"add_note" | "add_todo" | "tag", ToolArgsMap<readonly [typeof addNote, typeof addTodo, typeof tagArktype]>>
    >();
    session.onTool("add_note", (args, context) => {
      expectTypeOf(args).toEqualTypeOf<{ title: string; body?: string | undefined; count: number }>();
      expectTypeOf(context.toolName).toEqualTypeOf<"add_note">();
      return args.count + 1;
    });
    session.onTool("add_todo", (args) => expectTypeOf(args).toBeUnknown());
    session.onTool("tag", (args) => args.label.toUpperCase());
    // @ts-expect-error -- not a tool of this session
    session.onTool("rate", () => null);
    // @ts-expect-error -- count is a number once the schema ran
    session.onTool("add_note", (args: { count: string }) => args.count);
    session.onTool((args) => expectTypeOf(args).toBeUnknown());
    const typed: ToolHandler<"tag", { label: string; weight?: number }> = (args) => args.weight ?? 0;
    session.onTool("tag", typed);
  });

  it("still refuses a model without a provider when tools have schemas", () => {
    // @ts-expect-error -- model needs an explicit provider
    void pedelec.createSession({ model: "sonnet", skills: { guidance: "", tools: [addNote] } });
    void pedelec.createSession({ provider: "claude", model: "sonnet", skills: { guidance: "", tools: [addNote, rateValibot] } });
  });

  it("type a resumed session from the tools it is given", async () => {
    const session = await pedelec.resumeSession("session-0001", { afterSeq: 3, tools: [addNote, rateValibot] });
    expectTypeOf(session).toEqualTypeOf<PedelecSession<"add_note" | "rate", ToolArgsMap<readonly [typeof addNote, typeof rateValibot]>>>();
    session.onTool("rate", (args) => expectTypeOf(args.stars).toEqualTypeOf<number>());
    // @ts-expect-error -- not among the tools given
    session.onTool("tag", () => null);
    const untyped = await pedelec.resumeSession("session-0001");
    untyped.onTool("anything", (args) => expectTypeOf(args).toBeUnknown());
    expectTypeOf(untyped).toExtend<PedelecSession>();
    expectTypeOf(session).toExtend<PedelecSession>();
  });
});
