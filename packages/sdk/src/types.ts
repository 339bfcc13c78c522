import type {
  AccessMode as ProtocolAccessMode,
  EffortLevel as ProtocolEffortLevel,
  ExplicitEffort as ProtocolExplicitEffort,
  JsonValue as ProtocolJsonValue,
  ProviderCode as ProtocolProviderCode,
  SessionStatus as ProtocolSessionStatus,
  TurnKind as ProtocolTurnKind,
} from "@pedelec/protocol/domain";
import type { Artifact as ProtocolArtifact } from "@pedelec/protocol/artifacts";
import type { AssetEntry as ProtocolAssetEntry } from "@pedelec/protocol/assets";
import type { PageRequestResult } from "@pedelec/protocol/page-wire";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { CreateSessionInput, ProviderStatus, PublicSettings } from "@pedelec/protocol/requests";
import type { RunTermination as ProtocolRunTermination, ScriptRunResult, ScriptRunSpec } from "@pedelec/protocol/script-run";
import type {
  Activity as ProtocolActivity,
  SessionEndReason as ProtocolSessionEndReason,
  SessionEventEnvelope,
  SessionEventOf,
} from "@pedelec/protocol/session-events";
import type { TokenUsage as ProtocolTokenUsage } from "@pedelec/protocol/token-usage";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { ArgsSchemaNode as ProtocolArgsSchemaNode, ObjectSchemaNode, ToolManifestEntry } from "@pedelec/protocol/tool-schema";

/**
 * The agent backends a session can use.
 *
 * @example
 * ```ts
 * const provider: ProviderCode = "codex";
 * ```
 */
export type ProviderCode = ProtocolProviderCode;

/**
 * One of the three effort profiles the Desktop keeps per provider.
 *
 * @example
 * ```ts
 * const effortLevel: EffortLevel = "high";
 * ```
 */
export type EffortLevel = ProtocolEffortLevel;

/**
 * An explicit effort, named with a model in place of an effort profile: `"low" | "medium" | "high" | "xhigh" | "max"`.
 * Each provider maps it to its CLI's own setting (Claude Code `--effort`, Codex `model_reasoning_effort`, OpenCode
 * `--variant`, Ollama `think`); a level the CLI lacks is `EFFORT_NOT_SUPPORTED` with the levels it has.
 *
 * @example
 * ```ts
 * const effort: ExplicitEffort = "xhigh";
 * ```
 */
export type ExplicitEffort = ProtocolExplicitEffort;

/**
 * A session's status: `idle ⇄ running ⇄ waiting_tool_result`, `error` (recoverable), `ended` (final).
 *
 * @example
 * ```ts
 * session.onStatus((status: SessionStatus) => { spinner.hidden = status !== "running"; });
 * ```
 */
export type SessionStatus = ProtocolSessionStatus;

/**
 * What a session may do on the user's machine: `"sandbox"` (the default) or `"full"` (needs the user's grant).
 *
 * @example
 * ```ts
 * const access: AccessMode = "sandbox";
 * ```
 */
export type AccessMode = ProtocolAccessMode;

/**
 * Whether a turn carries a user message (`"user"`) or prepares the session (`"prepare"`, whose chat is hidden).
 *
 * @example
 * ```ts
 * const kind: TurnKind = "user";
 * ```
 */
export type TurnKind = ProtocolTurnKind;

/**
 * Why a session ended: `"requested"` (a page called `end()`), `"disconnected"` (its last page went away with
 * `autoEndOnDisconnect`), `"expired"` (unused longer than the Desktop keeps sessions) or `"full-access-revoked"` (the
 * user revoked the Full Access it ran with).
 *
 * @example
 * ```ts
 * session.onEnded((context) => { if (context.endReason === "expired") showNotice("The session expired."); });
 * ```
 */
export type SessionEndReason = ProtocolSessionEndReason;

/**
 * Normalized provider activity: `{ id, kind, status, title, detail? }`, e.g. a command that started or a file
 * that was edited. `id` matches a started activity with its completion.
 *
 * @example
 * ```ts
 * session.onActivity((activity: Activity) => log(`${activity.kind} ${activity.status}: ${activity.title}`));
 * ```
 */
export interface Activity extends ProtocolActivity {
  /** Stable per activity within a turn, so a started activity can be matched with its completion. */
  id: ProtocolActivity["id"];
  /** What the agent did: `"command"`, `"file-edit"`, `"file-read"`, `"web-search"`, `"tool"` or `"other"`. */
  kind: ProtocolActivity["kind"];
  /** `"started"`, `"completed"` or `"failed"`. */
  status: ProtocolActivity["status"];
  /** Short human text, e.g. the command line or the file path. */
  title: ProtocolActivity["title"];
  /** Longer output or details, capped by the Desktop. */
  detail?: ProtocolActivity["detail"];
}

/**
 * A file the agent wrote, or changed, in the session's assets folder during a turn, as `session.onArtifact` reports it
 * when the turn ends. Read it with `session.readAsset(artifact.path)`; `listAssets()` lists every asset, also those of
 * turns before a reload.
 *
 * @example
 * ```ts
 * session.onArtifact((artifact: Artifact) => {
 *   if (artifact.kind === "image") void session.readAsset(artifact.path, "file").then(showImage);
 * });
 * ```
 */
export interface Artifact extends ProtocolArtifact {
  /** Its asset path, e.g. `"/charts/sales.png"`: what `readAsset()` takes. */
  path: ProtocolArtifact["path"];
  /** `"image"`, `"audio"`, `"video"`, `"text"` (text/* and textual formats such as JSON) or `"file"`. */
  kind: ProtocolArtifact["kind"];
  /** Its size when the turn ended. */
  sizeBytes: ProtocolArtifact["sizeBytes"];
  /** From its name, as a download of it is served (`"image/png"`); unknown → `"application/octet-stream"`. */
  mediaType: ProtocolArtifact["mediaType"];
  /** ISO 8601, when it was last written. */
  modifiedAt: ProtocolArtifact["modifiedAt"];
}

/**
 * Tokens the agent used, as far as its provider reports them: a field is present only once the provider reported that
 * count (not every provider reports every one). Counts never go down.
 *
 * @example
 * ```ts
 * const label = (usage: TokenUsage) => (usage.totalTokens === undefined ? "" : `${usage.totalTokens.toLocaleString()} tokens`);
 * ```
 */
export interface TokenUsage extends ProtocolTokenUsage {
  /** Tokens of the prompts the provider sent the model, cached ones included. */
  readonly inputTokens?: ProtocolTokenUsage["inputTokens"];
  /** Tokens the model wrote. */
  readonly outputTokens?: ProtocolTokenUsage["outputTokens"];
  /** The part of `inputTokens` the provider served from its prompt cache (usually billed lower). */
  readonly cachedInputTokens?: ProtocolTokenUsage["cachedInputTokens"];
  /** The provider's own total where it gives one, else input plus output. */
  readonly totalTokens?: ProtocolTokenUsage["totalTokens"];
}

/**
 * A node of a tool's argument schema (string, number/integer, boolean, array, object, or oneOf).
 *
 * @example
 * ```ts
 * const priority: ArgsSchemaNode = { type: "integer", minimum: 1, maximum: 5, description: "1 is highest" };
 * ```
 */
export type ArgsSchemaNode = ProtocolArgsSchemaNode;

/**
 * A JSON value: what tool arguments are and what tool handlers must return.
 *
 * @example
 * ```ts
 * const result: JsonValue = { ok: true, ids: [1, 2] };
 * ```
 */
export type JsonValue = ProtocolJsonValue;

/**
 * Options of `new Pedelec()`.
 *
 * @example
 * ```ts
 * const pedelec = new Pedelec({ bridgeTimeoutMs: 10_000 });
 * ```
 */
export interface PedelecOptions {
  /**
   * How long one request may wait for the extension's answer, in milliseconds (default 30000, at least 1).
   * The clock is paused while the user looks at the approval popup.
   */
  bridgeTimeoutMs?: number;
  /** The id of the Pedelec extension to talk to (default: the published extension's id). */
  extensionId?: string;
}

/** A schema type whose arrays may also be readonly, so schemas written `as const` are accepted. */
export type ReadonlySchema<T> =
  T extends ReadonlyArray<infer Item>
    ? readonly ReadonlySchema<Item>[]
    : T extends object
      ? { readonly [Key in keyof T]: ReadonlySchema<T[Key]> }
      : T;

/**
 * The root schema of a tool's arguments: always an object schema, in the supported subset of JSON Schema.
 * Readonly arrays are fine, so a schema may be declared `as const`.
 *
 * @example
 * ```ts
 * const argsSchema: ToolArgsSchema = {
 *   type: "object",
 *   properties: { title: { type: "string", minLength: 1 } },
 *   required: ["title"],
 * };
 * ```
 */
export type ToolArgsSchema = ReadonlySchema<ObjectSchemaNode>;

/**
 * What a tool handler learns about the call it answers.
 *
 * @example
 * ```ts
 * session.onTool("add_todo", async (args, context) => {
 *   const response = await fetch("/api/todos", { method: "POST", body: JSON.stringify(args), signal: context.signal });
 *   return { created: response.ok };
 * });
 * ```
 */
export interface ToolHandlerContext<TToolName extends string = string>
  extends Omit<PedelecEventContext, "turnId" | "toolRequestId" | "messageId" | "turnUsage"> {
  /** The name of the tool the agent called. */
  readonly toolName: TToolName;
  /** Core's id of this call; unique within the session. */
  readonly toolRequestId: SessionEventOf<"tool-call-requested">["toolRequestId"];
  /** The turn during which the agent made the call (SDK-local, opaque). */
  readonly turnId: SessionEventOf<"tool-call-requested">["turnId"];
  /** The session the call belongs to. */
  readonly sessionId: string;
  /**
   * Aborted when the result is no longer wanted: the call timed out or was cancelled, the turn or the
   * session ended, or the extension connection was lost. A result returned after that is not submitted.
   */
  readonly signal: AbortSignal;
}

/**
 * Answers one tool call in the page. It gets the agent's arguments, already checked twice: by Core against the JSON
 * subset, and in the page by the tool's own schema (a Standard Schema's output, with its defaults and transforms, when
 * the tool was defined with `args`; `unknown` for an `argsSchema` tool). It returns a JSON value, or a promise of one.
 * A thrown error becomes a `TOOL_HANDLER_ERROR` result; a value that is not JSON becomes `TOOL_RESULT_INVALID`.
 *
 * @example
 * ```ts
 * const handler: ToolHandler = (args) => ({ received: args });
 * const typed: ToolHandler<"add_note", { title: string }> = (args) => ({ length: args.title.length });
 * ```
 */
export type ToolHandler<TToolName extends string = string, TArgs = unknown> = (args: TArgs, context: ToolHandlerContext<TToolName>) => unknown;

/**
 * A Standard Schema (v1) for a tool's arguments: a zod 4, valibot or arktype schema, or any object with
 * `"~standard"` version 1. Its root must describe an object. `TArgs` is what the handler gets (the schema's output).
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * const args: ToolArgsStandardSchema<{ title: string }> = z.object({ title: z.string() });
 * ```
 */
export type ToolArgsStandardSchema<TArgs = unknown> = StandardSchemaV1<unknown, TArgs>;

/** The fields every tool definition has, whichever way it describes its arguments. */
export interface ToolDefinitionBase<TToolName extends string = string, TArgs = unknown> {
  /** Starts with a letter; letters, digits, `_`, `.`, `-`; unique within a session. */
  readonly name: TToolName;
  /** What the tool does, in words the agent reads in its tool index. */
  readonly description: ToolManifestEntry["description"];
  /** How long Core waits for the page's answer before the call fails with `TOOL_TIMEOUT` (default 60000). */
  readonly timeoutMs?: ToolManifestEntry["timeoutMs"];
  /**
   * The tool's own handler. `createSession()` and `resumeSession({ tools })` register it; a handler given later with
   * `session.onTool(name, …)` replaces it (and unsubscribing that one brings it back).
   * (Declared as a method so a tool with a literal name stays assignable to `ToolDefinition<string>`.)
   */
  handler?(args: TArgs, context: ToolHandlerContext<TToolName>): unknown;
}

/**
 * A tool whose arguments are described in the supported subset of JSON Schema (`argsSchema`), sent to Core as is.
 * Its handler's arguments are `unknown`.
 *
 * @example
 * ```ts
 * const addTodo: JsonSchemaToolDefinition<"add_todo"> = {
 *   name: "add_todo",
 *   description: "Add an item to the todo list.",
 *   argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
 * };
 * ```
 */
export interface JsonSchemaToolDefinition<TToolName extends string = string> extends ToolDefinitionBase<TToolName, unknown> {
  /** The schema Core checks the agent's arguments against before the page sees them. */
  readonly argsSchema: ToolArgsSchema;
  /** Not with `argsSchema`. */
  readonly args?: undefined;
  /** Not with `argsSchema`. */
  readonly jsonSchema?: undefined;
}

/**
 * A tool whose arguments are a Standard Schema (zod 4, valibot, arktype). `defineTool()` converts it to the JSON subset
 * Core enforces, through the schema's own JSON Schema export, and refuses at once (`INVALID_INPUT`, naming the property
 * and the feature) a schema the subset cannot express: a union whose options may overlap, `null`, records, tuples,
 * strict bounds on non-integers, formats without a pattern, recursive schemas, …. Before a handler runs, the page checks
 * the arguments with the schema itself (`~standard.validate`, which may be async): invalid arguments are answered with
 * `TOOL_ARGS_INVALID` and no handler runs; valid ones reach the handler as the schema's output.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * const addNote: StandardSchemaToolDefinition<"add_note", { title: string }> = {
 *   name: "add_note",
 *   description: "Add a note.",
 *   args: z.object({ title: z.string().min(1) }),
 *   handler: (args) => ({ saved: args.title }),
 * };
 * ```
 */
export interface StandardSchemaToolDefinition<TToolName extends string = string, TArgs = unknown> extends ToolDefinitionBase<TToolName, TArgs> {
  /** The arguments' schema; its root must describe an object. */
  readonly args: ToolArgsStandardSchema<TArgs>;
  /**
   * The schema's JSON Schema, for a library whose schemas do not export one themselves (valibot without
   * `toStandardJsonSchema()`): e.g. `toJsonSchema(schema, { typeMode: "input" })` from `@valibot/to-json-schema`.
   * Without it, the schema's `~standard.jsonSchema` (zod, arktype) is used.
   */
  readonly jsonSchema?: object;
  /** Not with `args`. */
  readonly argsSchema?: undefined;
}

/**
 * A frontend tool the agent can call: exactly one of `argsSchema` (JSON Schema subset) and `args` (a Standard Schema).
 * Everything except the handler (and a Standard Schema itself, sent as its JSON Schema) goes to Core; the handler stays
 * in the page. Build it with `defineTool()` so the name's literal type and the arguments' type reach
 * `session.onTool(name, …)`. `TArgs` is the handler's arguments type; `unknown` admits both forms.
 *
 * @example
 * ```ts
 * const addTodo = defineTool({
 *   name: "add_todo",
 *   description: "Add an item to the todo list.",
 *   argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
 *   handler: (args) => ({ ok: true, args }),
 * });
 * ```
 */
export type ToolDefinition<TToolName extends string = string, TArgs = unknown> =
  | StandardSchemaToolDefinition<TToolName, TArgs>
  | (unknown extends TArgs ? JsonSchemaToolDefinition<TToolName> : never);

/**
 * The arguments type a tool's handler gets: a Standard Schema's output, `unknown` for an `argsSchema` tool.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * const addNote = defineTool({ name: "add_note", description: "Add a note.", args: z.object({ title: z.string() }) });
 * type AddNoteArgs = ToolArgsOf<typeof addNote>; // { title: string }
 * ```
 */
export type ToolArgsOf<TTool> = TTool extends { readonly args: infer TSchema }
  ? TSchema extends StandardSchemaV1
    ? StandardSchemaV1.InferOutput<TSchema>
    : unknown
  : unknown;

/**
 * Each declared tool's name mapped to its handler's arguments type, e.g. `{ add_note: { title: string }; list: unknown }`.
 *
 * @example
 * ```ts
 * type Args = ToolArgsMap<[typeof addNote]>;
 * const sample: Args["add_note"] = { title: "Milk" };
 * ```
 */
export type ToolArgsMap<TTools extends readonly ToolDefinition[]> = {
  [TTool in TTools[number] as TTool["name"]]: ToolArgsOf<TTool>;
};

/**
 * The arguments type of tool `TName` in a session's `ToolArgsMap` (a session's `onTool` only takes names the map has).
 *
 * @example
 * ```ts
 * type AddNoteArgs = ToolArgsFor<{ add_note: { title: string } }, "add_note">; // { title: string }
 * ```
 */
export type ToolArgsFor<TToolArgs, TName extends string> = TToolArgs[TName & keyof TToolArgs];

/**
 * What the agent is told about the app: free-form guidance plus the tools it may call.
 *
 * @example
 * ```ts
 * const skills: SessionSkills = { guidance: "You manage a todo list.", tools: [] };
 * ```
 */
export interface SessionSkills<TTools extends readonly ToolDefinition[] = readonly ToolDefinition[]> {
  /** Text injected into the agent's first prompt. */
  guidance: string;
  /** The frontend tools of the session. */
  tools: TTools;
}

/** The fields of `createSession()` that do not depend on the provider choice. */
export interface CreateSessionCommonOptions<TTools extends readonly ToolDefinition[] = readonly ToolDefinition[]> {
  /**
   * Which of the provider's three effort profiles to use (default: the Desktop's default effort level); or name a
   * `model` and an explicit `effort` instead.
   */
  effortLevel?: EffortLevel;
  /** Guidance and frontend tools for the agent. */
  skills?: SessionSkills<TTools>;
  /** An absolute folder to work in; without it the Desktop creates and owns a temporary workspace. */
  workspace?: {
    /** An absolute, existing folder the user consents to in the extension (system folders and the home folder itself are refused). */
    path: NonNullable<CreateSessionInput["workspace"]>["path"];
  };
  /** `"sandbox"` (default) or `"full"`; full access also needs the user's grant in the extension. */
  access?: AccessMode;
  /** End the session when the last page connected to it goes away (default true). */
  autoEndOnDisconnect?: CreateSessionInput["autoEndOnDisconnect"];
}

/**
 * Input of `pedelec.createSession()`. A `model` needs an explicit `provider`, and an `effort` a `model`, in place of
 * `effortLevel` (type errors otherwise).
 *
 * @example
 * ```ts
 * const withDefaults: CreateSessionOptions = {};
 * const explicit: CreateSessionOptions = { provider: "claude", effortLevel: "high", model: "sonnet" };
 * const explicitEffort: CreateSessionOptions = { provider: "codex", model: "gpt-5.1-codex-max", effort: "xhigh" };
 * ```
 */
export type CreateSessionOptions<TTools extends readonly ToolDefinition[] = readonly ToolDefinition[]> =
  | (CreateSessionCommonOptions<TTools> & {
      /** The agent backend; without it the Desktop's default provider is used. */
      provider: ProviderCode;
      /** A model name understood by the provider (default: the Desktop's default model for it). */
      model?: CreateSessionInput["model"];
      /** Needs a `model`. */
      effort?: undefined;
    })
  | (Omit<CreateSessionCommonOptions<TTools>, "effortLevel"> & {
      /** The agent backend whose own effort setting `effort` sets. */
      provider: ProviderCode;
      /** The model the explicit effort is for. */
      model: NonNullable<CreateSessionInput["model"]>;
      /** The provider's own effort setting, in place of an effort profile (so `effortLevel` is not allowed with it). */
      effort: ExplicitEffort;
      /** Not allowed with `effort`. */
      effortLevel?: undefined;
    })
  | (CreateSessionCommonOptions<TTools> & {
      /** Omitted: the Desktop's default provider. */
      provider?: undefined;
      /** Not allowed without an explicit provider. */
      model?: undefined;
      /** Not allowed without an explicit provider and model. */
      effort?: undefined;
    });

/** The tool names declared in a `tools` tuple, e.g. `"add_todo" | "remove_todo"`. */
export type ToolNameOf<TTools extends readonly ToolDefinition[]> = TTools[number]["name"];

/**
 * How a script run ended, as far as Pedelec is concerned: `"exited"` (every exit of the script's own making,
 * whatever its exit code), `"timeout"`, `"cancelled"` or `"memory-limit"`.
 *
 * @example
 * ```ts
 * const termination: RunTermination = "exited";
 * ```
 */
export type RunTermination = ProtocolRunTermination;

/** The fields of `workspace.run()` options that do not depend on where the code comes from. */
export interface PedelecRunCommonOptions {
  /** Arguments the script reads from `Deno.args`. They never change the run's permissions. */
  args?: Readonly<NonNullable<ScriptRunSpec["args"]>>;
  /**
   * How long the script may run, in milliseconds (default 60000, at most 600000). When it is over, the run's
   * whole process tree is killed and the result has `timedOut: true`. The SDK waits this long plus the bridge
   * timeout for the answer.
   */
  timeoutMs?: ScriptRunSpec["timeoutMs"];
  /**
   * `"sandbox"` (the default): read and write inside the workspace only; no network, environment, subprocesses,
   * FFI, sys, remote or npm imports. `"full"`: runs as the user with no such limits; refused with
   * `FULL_ACCESS_NOT_GRANTED` unless the user granted this origin Full Access in the extension.
   */
  access?: AccessMode;
  /** A workspace-relative import map, checked before the run (`DENO_IMPORT_MAP_INVALID`). */
  importMap?: ScriptRunSpec["importMap"];
  /**
   * Aborting it stops the run: the SDK asks the Desktop to kill the run's process tree and the promise rejects
   * with `DENO_CANCELLED` at once. An already-aborted signal rejects without starting anything.
   */
  signal?: AbortSignal;
}

/**
 * Options of `session.workspace.run()`: exactly one of `entry` (a file in the workspace) and `source` (code run from
 * the workspace root). Giving both, or neither, is a type error and `INVALID_INPUT` at run time.
 *
 * @example
 * ```ts
 * const fromFile: PedelecRunOptions = { entry: "scripts/report.ts", args: ["--month", "2025-01"] };
 * const inline: PedelecRunOptions = { source: "console.log(await Deno.readTextFile('notes.md'));", timeoutMs: 5_000 };
 * ```
 */
export type PedelecRunOptions =
  | (PedelecRunCommonOptions & {
      /** A workspace-relative path of the script to run (`DENO_ENTRY_INVALID` when it leaves the workspace or is missing). */
      entry: string;
      /** Not with `entry`. */
      source?: undefined;
    })
  | (PedelecRunCommonOptions & {
      /** JavaScript or TypeScript source to run; relative imports resolve from the workspace root. */
      source: string;
      /** Not with `source`. */
      entry?: undefined;
    });

/**
 * The outcome of one `workspace.run()`. A script's own failure (a non-zero exit, an uncaught exception) and a
 * timeout are outcomes, not errors: the promise resolves with them.
 *
 * @example
 * ```ts
 * const result: PedelecRunResult = await session.workspace.run({ entry: "build.ts" });
 * if (result.timedOut) showWarning("The build took too long");
 * else if (result.exitCode !== 0) showError(result.stderr);
 * ```
 */
export interface PedelecRunResult extends ScriptRunResult {
  /** The script's exit code; null when it did not exit by itself (killed by a signal, a timeout or a cancel). */
  exitCode: ScriptRunResult["exitCode"];
  /** The name of the signal that ended the process (e.g. `"SIGKILL"`), or null when it exited by itself. */
  signal: ScriptRunResult["signal"];
  /** What the script wrote to stdout, decoded as UTF-8, up to the output cap (1 MiB). */
  stdout: ScriptRunResult["stdout"];
  /** What the script wrote to stderr, decoded as UTF-8, up to the output cap (1 MiB). */
  stderr: ScriptRunResult["stderr"];
  /** True when stdout went over the cap; the rest of it was dropped. */
  stdoutTruncated: ScriptRunResult["stdoutTruncated"];
  /** True when stderr went over the cap; the rest of it was dropped. */
  stderrTruncated: ScriptRunResult["stderrTruncated"];
  /** True when the run hit its `timeoutMs` and was killed. */
  timedOut: ScriptRunResult["timedOut"];
  /** Wall-clock milliseconds from the start of the script to the end of the run. */
  durationMs: ScriptRunResult["durationMs"];
  /**
   * How the run ended: `"exited"` or `"timeout"`. (A cancelled run and one stopped at the memory limit reject with
   * `DENO_CANCELLED` and `DENO_MEMORY_LIMIT` instead; the other two values appear where runs are reported elsewhere.)
   */
  termination: ScriptRunResult["termination"];
  /** The access the run actually had: `"sandbox"` or `"full"`. */
  access: ScriptRunResult["access"];
  /**
   * The boundaries that held the run, e.g. `["deno-permissions", "bubblewrap"]` in the sandbox; empty with Full
   * Access.
   */
  walls: ScriptRunResult["walls"];
  /**
   * Set when some process the run started could not be cleaned up (best effort: a process that deliberately
   * escaped its process group may survive). Describes what was left.
   */
  processTreeCleanupError?: ScriptRunResult["processTreeCleanupError"];
  /** Set when collecting the script's output failed; stdout and stderr may then be incomplete. */
  captureError?: ScriptRunResult["captureError"];
}

/**
 * The folder a session works in, and the scripts that run in it.
 *
 * @example
 * ```ts
 * if (session.workspace.managed) console.log("temporary workspace at", session.workspace.path);
 * ```
 */
export interface PedelecWorkspace {
  /** Absolute path on the user's machine. */
  readonly path: string;
  /** True when the Desktop created the folder and will remove it; false for an app-chosen `workspace.path`. */
  readonly managed: boolean;
  /**
   * Runs one JavaScript or TypeScript script in the workspace with the Desktop's pinned Deno, sandboxed unless
   * `access: "full"` is asked for and granted. Resolves with the outcome, also when the script fails or times out.
   * Rejects with a `PedelecError` when the run is refused or stopped: `INVALID_INPUT`, `DENO_ENTRY_INVALID`,
   * `DENO_IMPORT_MAP_INVALID`, `DENO_UNAVAILABLE`, `FULL_ACCESS_NOT_GRANTED`, `DENO_CANCELLED` (the signal was
   * aborted), `DENO_MEMORY_LIMIT` (the script used too much memory and was stopped), `SESSION_BUSY` (too many runs
   * of the session at once), `SESSION_ENDED` (also for runs still going when the session ends), or a transport
   * error such as `EXTENSION_DISCONNECTED`.
   *
   * @example
   * ```ts
   * const controller = new AbortController();
   * stopButton.onclick = () => controller.abort();
   * const result = await session.workspace.run({ entry: "scripts/count-words.ts", args: ["notes.md"], signal: controller.signal });
   * console.log(result.exitCode, result.stdout);
   * ```
   */
  run(options: PedelecRunOptions): Promise<PedelecRunResult>;
  /**
   * Every regular file in the workspace, or under its folder `path` (workspace-relative, `/`-separated), recursively:
   * workspace-relative `/`-separated paths sorted by code point. Symlinks are neither listed nor followed (a `path`
   * through one is refused); Pedelec's `.pedelec-runtime` and git's `.git` folders are not entered. Rejects with
   * `INVALID_INPUT` (a `path` with a leading `/`, a backslash, an empty, `.` or `..` segment: checked before anything is sent),
   * `WORKSPACE_PATH_INVALID` (no such folder, not a folder, through a symlink, unreadable), `WORKSPACE_LIST_TOO_LARGE`
   * (more than 50,000 paths or 4 MiB of them: nothing is ever cut short; list a subfolder), `SESSION_ENDED`, or a
   * transport error.
   *
   * @example
   * ```ts
   * const sources = await session.workspace.listFiles("src"); // ["src/index.ts", "src/lib/util.ts"]
   * ```
   */
  listFiles(path?: string): Promise<string[]>;
  /**
   * Every folder in the workspace, or under its folder `path`, recursively, as `listFiles()` lists files (same order,
   * rules and errors).
   *
   * @example
   * ```ts
   * const folders = await session.workspace.listFolders(); // ["docs", "src", "src/lib"]
   * ```
   */
  listFolders(path?: string): Promise<string[]>;
}

/**
 * Where a callback comes from and what it belongs to.
 *
 * @example
 * ```ts
 * session.onChatDelta((delta, context) => {
 *   if (context.turnId !== currentTurnId) return; // a late callback of an older turn
 *   appendText(context.messageId, delta);
 * });
 * ```
 */
export interface PedelecEventContext {
  /** The session the callback is about. */
  sessionId: string;
  /** The session's provider. */
  provider: ProviderCode;
  /** `"core"` for events the Desktop runtime emitted, `"sdk"` for ones this page's SDK produced itself. */
  source: "core" | "sdk";
  /** ISO 8601 time the event was emitted (by Core, or by the SDK for `source: "sdk"`). */
  eventEmittedAt: SessionEventEnvelope["emittedAt"];
  /** The turn the event belongs to, when there is one (SDK-local, opaque: do not parse it). */
  turnId?: string;
  /** Whether that turn was a user message or a prepare turn. */
  turnKind?: TurnKind;
  /** The tool call the event is about, for tool events. */
  toolRequestId?: string;
  /** The assistant message a chat delta or chat message belongs to. */
  messageId?: string;
  /**
   * Core's per-session sequence number of the event (absent for `source: "sdk"`, and for what the SDK learned from a
   * create or resume answer). Keep the newest one to resume after a reload with `{ afterSeq }`.
   */
  seq?: SessionEventEnvelope["seq"];
  /** Why the session ended, on the `onEnded` context (absent when the SDK could not learn it, e.g. it was already over). */
  endReason?: SessionEndReason;
  /** The turn's own usage so far, on the `onUsage` context (the callback's first argument is the session's total). */
  turnUsage?: TokenUsage;
}

/**
 * A completed assistant message.
 *
 * @example
 * ```ts
 * session.onChat((message) => render(message.messageId, message.text));
 * ```
 */
export interface ChatMessage extends Pick<SessionEventOf<"chat-completed">, "messageId" | "text"> {
  /** Identifies the message; the chat deltas that built it carry the same id in their context. */
  messageId: SessionEventOf<"chat-completed">["messageId"];
  /** The full text of the message. */
  text: SessionEventOf<"chat-completed">["text"];
}

/**
 * Whether the extension is there and whether this page's origin may use it.
 *
 * @example
 * ```ts
 * const status = await pedelec.getApprovalStatus();
 * if (!status.installed) showInstallHint();
 * ```
 */
export interface ApprovalStatus extends Omit<PageRequestResult<"getApprovalStatus">, "installed"> {
  /** False when the extension could not be reached from this page. */
  installed: boolean;
  /** True when the user approved this origin. */
  approved: PageRequestResult<"getApprovalStatus">["approved"];
  /** The origin the extension saw (or `location.origin` when it could not be reached). */
  origin: PageRequestResult<"getApprovalStatus">["origin"];
  /** True when the extension holds a live connection to the desktop runtime. */
  appConnected: PageRequestResult<"getApprovalStatus">["appConnected"];
  /** True when the native host started the desktop runtime (or tried to) for the extension's current link to it. */
  appLaunched: PageRequestResult<"getApprovalStatus">["appLaunched"];
}

/**
 * One provider as the user's machine has it: whether Pedelec can run it now, and if not, why.
 *
 * @example
 * ```ts
 * const providers = await pedelec.listProviders();
 * const usable = providers.filter((provider) => provider.available).map((provider) => provider.code);
 * ```
 */
export interface ProviderAvailability extends ProviderStatus {
  /** The provider's code, what `createSession({ provider })` takes. */
  code: ProviderStatus["code"];
  /** The product's name, e.g. "Claude Code". */
  name: ProviderStatus["name"];
  /** True when Pedelec can run the provider now (installed, found, signed in as far as it can tell). */
  available: ProviderStatus["available"];
  /** A sentence the user can act on when `available` is false; null otherwise. */
  error: ProviderStatus["error"];
}

/**
 * The user's defaults in Pedelec Desktop. Secrets and local paths are never included.
 *
 * @example
 * ```ts
 * const { defaultProvider } = await pedelec.getSettings();
 * ```
 */
export interface PedelecSettings extends PublicSettings {
  /** The provider a session without `provider` gets, or null when the user has not chosen one. */
  defaultProvider: PublicSettings["defaultProvider"];
  /** The effort level a session without `effortLevel` gets. */
  defaultEffortLevel: PublicSettings["defaultEffortLevel"];
  /** The model each provider uses when a session names none. */
  defaultModels: PublicSettings["defaultModels"];
}

/**
 * One file among the session's assets (the workspace's `.pedelec-runtime/assets/` folder), as `listAssets()` reports it.
 *
 * @example
 * ```ts
 * const assets: AssetEntry[] = await session.listAssets();
 * for (const asset of assets) console.log(asset.path, asset.sizeBytes, asset.modifiedAt);
 * ```
 */
export interface AssetEntry extends ProtocolAssetEntry {
  /** The last segment of the path, e.g. `"report.pdf"`. */
  name: ProtocolAssetEntry["name"];
  /** The asset path, starting with `/`, e.g. `"/inbox/report.pdf"`: what `readAsset()` takes. */
  path: ProtocolAssetEntry["path"];
  /** The file's size in bytes. */
  sizeBytes: ProtocolAssetEntry["sizeBytes"];
  /** ISO 8601 time the file was last changed. */
  modifiedAt: ProtocolAssetEntry["modifiedAt"];
}

/**
 * How far an upload has come, as `uploadAsset()` reports it to `onProgress`.
 *
 * @example
 * ```ts
 * const showProgress = (progress: AssetUploadProgress) => {
 *   bar.value = progress.totalBytes === 0 ? 1 : progress.loadedBytes / progress.totalBytes;
 * };
 * ```
 */
export interface AssetUploadProgress {
  /** Bytes sent so far. */
  loadedBytes: number;
  /** The size of the whole file. */
  totalBytes: number;
}

/**
 * Options of `session.uploadAsset()`.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const options: AssetUploadOptions = {
 *   onProgress: ({ loadedBytes, totalBytes }) => console.log(`${loadedBytes} of ${totalBytes} bytes`),
 *   signal: controller.signal,
 * };
 * ```
 */
export interface AssetUploadOptions {
  /**
   * Called while the body is sent, at most every 50 ms, and once more with `loadedBytes === totalBytes` when the
   * upload succeeded. A throwing callback does not stop the upload.
   */
  onProgress?(progress: AssetUploadProgress): void;
  /**
   * Aborting it stops the upload: the promise rejects with `ASSET_UPLOAD_FAILED` ("The upload was cancelled") at once
   * and the Desktop throws away what it received. An already-aborted signal rejects without sending anything.
   */
  signal?: AbortSignal;
}

/**
 * How `readAsset()` hands the file over: `"text"` (a string, strict UTF-8), `"json"` (the parsed value) or `"file"`
 * (a `File`). Text and JSON reads are limited to 16 MiB; read bigger assets as a file.
 *
 * @example
 * ```ts
 * const kind: AssetReadKind = "json";
 * ```
 */
export type AssetReadKind = "text" | "json" | "file";

/**
 * Options of `session.readAsset()`.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const options: AssetReadOptions = { signal: controller.signal };
 * ```
 */
export interface AssetReadOptions {
  /**
   * Aborting it stops the download: the promise rejects with `ASSET_READ_FAILED` ("The read was cancelled") at once.
   * An already-aborted signal rejects without sending anything.
   */
  signal?: AbortSignal;
}

/**
 * Options of `pedelec.createSession()` beyond the session's own settings.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * cancelButton.onclick = () => controller.abort();
 * const session = await pedelec.createSession({ provider: "claude" }, { signal: controller.signal });
 * ```
 */
export interface CreateSessionRequestOptions {
  /**
   * Aborting it gives up waiting (for the user's approval, or for the Desktop): the promise rejects at once with the
   * abort reason when that is a `PedelecError`, otherwise `SDK_TRANSPORT_ERROR` ("createSession was aborted"). A
   * session the Desktop creates after that is ended right away. An already-aborted signal sends nothing.
   */
  signal?: AbortSignal;
}

/**
 * Options of `pedelec.resumeSession()`.
 *
 * @example
 * ```ts
 * // Saved while the page ran: sessionStorage.setItem("pedelec", JSON.stringify({ sessionId, lastSeq: session.lastSeq }))
 * const saved = JSON.parse(sessionStorage.getItem("pedelec") ?? "null") as { sessionId: string; lastSeq: number } | null;
 * if (saved) {
 *   // The tools the session was created with: their handlers are registered and their arguments checked again.
 *   const session = await pedelec.resumeSession(saved.sessionId, { afterSeq: saved.lastSeq, tools: [addTodo] });
 * }
 * ```
 */
export interface ResumeSessionOptions<TTools extends readonly ToolDefinition[] = readonly ToolDefinition[]> {
  /**
   * The seq of the newest event the page already handled (`context.seq`, or `session.lastSeq`). The Desktop then
   * sends every event it kept after it, in order, before the live ones; the handle reports them through the usual
   * callbacks once the caller has the handle. Without it nothing is replayed. Either way the tool calls still waiting
   * for a page are run (each by one page only).
   */
  afterSeq?: number;
  /**
   * Aborting it gives up waiting for the answer: the promise rejects at once with the abort reason when that is a
   * `PedelecError`, otherwise `SDK_TRANSPORT_ERROR` ("resumeSession was aborted"). An already-aborted signal sends
   * nothing.
   */
  signal?: AbortSignal;
  /**
   * The tools the session was created with (the same definitions). Nothing is sent: the page registers their own
   * handlers (a later `onTool(name, …)` replaces one), checks the arguments of their calls with their schemas, and the
   * handle's `onTool` knows their names and argument types. Checked like createSession's tools (`INVALID_INPUT`).
   */
  tools?: TTools;
}

/**
 * Options of `session.sendText()`.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * stopButton.onclick = () => controller.abort();
 * await session.sendText("Plan the week.", { signal: controller.signal });
 * ```
 */
export interface SendTextOptions {
  /**
   * Aborting it before the message was sent rejects without sending it; aborting it during the turn asks the Desktop to
   * cancel the turn (like `cancel()`) and rejects at once. Either way the rejection is the abort reason when that is a
   * `PedelecError`, otherwise `TURN_CANCELLED`.
   */
  signal?: AbortSignal;
}

/**
 * What `pedelec.checkAvailability()` found: whether a session could be created now, and if not, which part is missing.
 *
 * @example
 * ```ts
 * const availability = await pedelec.checkAvailability();
 * if (!availability.extension.available) showInstallHint();
 * else if (!availability.approval.approved) showConnectButton();
 * else if (!availability.desktop.available) showDesktopHint(availability.error?.message);
 * ```
 */
export interface PedelecAvailability {
  /** True when the extension is there, this origin is approved and the Desktop answers. */
  available: boolean;
  /** Whether the Pedelec extension answers this page. */
  extension: {
    /** True when the extension answered. */
    available: boolean;
  };
  /** Whether the user approved this page's origin (never asked here: the popup is not opened). */
  approval: {
    /** True when the user approved this origin. */
    approved: boolean;
    /** The origin the extension saw (or `location.origin` when it could not be reached). */
    origin: string;
  };
  /**
   * Whether the desktop runtime answers. Asked only for an approved origin; otherwise this is whether the extension
   * already holds a connection to it.
   */
  desktop: {
    /** True when the desktop runtime answered (or, for an origin not approved, the extension is connected to it). */
    available: boolean;
    /**
     * True when the desktop runtime was not running and the native host started it (or tried to): for this check, or
     * for an earlier request of this browser that the runtime still serves.
     */
    launchAttempted: boolean;
  };
  /** Why `available` is false: the first missing part's error. */
  error?: PedelecError;
}
