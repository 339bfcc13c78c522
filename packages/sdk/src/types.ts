import type {
  AccessMode as ProtocolAccessMode,
  EffortLevel as ProtocolEffortLevel,
  JsonValue as ProtocolJsonValue,
  ProviderCode as ProtocolProviderCode,
  SessionStatus as ProtocolSessionStatus,
  TurnKind as ProtocolTurnKind,
} from "@pedelec/protocol/domain";
import type { Activity as ProtocolActivity } from "@pedelec/protocol/session-events";
import type { ArgsSchemaNode as ProtocolArgsSchemaNode, ObjectSchemaNode } from "@pedelec/protocol/tool-schema";

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
 * Normalized provider activity: `{ id, kind, status, title, detail? }`, e.g. a command that started or a file
 * that was edited. `id` matches a started activity with its completion.
 *
 * @example
 * ```ts
 * session.onActivity((activity: Activity) => log(`${activity.kind} ${activity.status}: ${activity.title}`));
 * ```
 */
export type Activity = ProtocolActivity;

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
export type ReadonlySchema<T> = T extends ReadonlyArray<infer Item>
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
export interface ToolHandlerContext<TToolName extends string = string> {
  /** The name of the tool the agent called. */
  readonly toolName: TToolName;
  /** Core's id of this call; unique within the session. */
  readonly toolRequestId: string;
  /** The turn during which the agent made the call (SDK-local, opaque). */
  readonly turnId: string;
  /** The session the call belongs to. */
  readonly sessionId: string;
  /**
   * Aborted when the result is no longer wanted: the call timed out or was cancelled, the turn or the
   * session ended, or the extension connection was lost. A result returned after that is not submitted.
   */
  readonly signal: AbortSignal;
}

/**
 * Answers one tool call in the page. It gets the agent's arguments (already checked by Core against the
 * tool's argsSchema, but still untrusted input) and returns a JSON value, or a promise of one.
 * A thrown error becomes a `TOOL_HANDLER_ERROR` result; a value that is not JSON becomes `TOOL_RESULT_INVALID`.
 *
 * @example
 * ```ts
 * const handler: ToolHandler = (args) => ({ received: args });
 * ```
 */
export type ToolHandler<TToolName extends string = string> = (
  args: unknown,
  context: ToolHandlerContext<TToolName>,
) => unknown;

/**
 * A frontend tool the agent can call. Everything except `handler` is sent to Core; the handler stays in the page.
 * Build it with `defineTool()` so the name's literal type reaches `session.onTool(name, …)`.
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
export interface ToolDefinition<TToolName extends string = string> {
  /** Starts with a letter; letters, digits, `_`, `.`, `-`; unique within a session. */
  readonly name: TToolName;
  /** What the tool does, in words the agent reads in its tool index. */
  readonly description: string;
  /** The schema Core checks the agent's arguments against before the page sees them. */
  readonly argsSchema: ToolArgsSchema;
  /** How long Core waits for the page's answer before the call fails with `TOOL_TIMEOUT` (default 60000). */
  readonly timeoutMs?: number;
  /**
   * The inline handler, used when no named handler was registered with `session.onTool(name, …)`.
   * (Declared as a method so a tool with a literal name stays assignable to `ToolDefinition<string>`.)
   */
  handler?(args: unknown, context: ToolHandlerContext<TToolName>): unknown;
}

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
  /** Which of the provider's three effort profiles to use (default: the Desktop's default effort level). */
  effortLevel?: EffortLevel;
  /** Guidance and frontend tools for the agent. */
  skills?: SessionSkills<TTools>;
  /** An absolute folder to work in; without it the Desktop creates and owns a temporary workspace. */
  workspace?: { path: string };
  /** `"sandbox"` (default) or `"full"`; full access also needs the user's grant in the extension. */
  access?: AccessMode;
  /** End the session when the last page connected to it goes away (default true). */
  autoEndOnDisconnect?: boolean;
}

/**
 * Input of `pedelec.createSession()`. A `model` needs an explicit `provider` (a type error otherwise).
 *
 * @example
 * ```ts
 * const withDefaults: CreateSessionOptions = {};
 * const explicit: CreateSessionOptions = { provider: "claude", effortLevel: "high", model: "sonnet" };
 * ```
 */
export type CreateSessionOptions<TTools extends readonly ToolDefinition[] = readonly ToolDefinition[]> =
  | (CreateSessionCommonOptions<TTools> & {
      /** The agent backend; without it the Desktop's default provider is used. */
      provider: ProviderCode;
      /** A model name understood by the provider (default: the Desktop's default model for it). */
      model?: string;
    })
  | (CreateSessionCommonOptions<TTools> & {
      /** Omitted: the Desktop's default provider. */
      provider?: undefined;
      /** Not allowed without an explicit provider. */
      model?: undefined;
    });

/** The tool names declared in a `tools` tuple, e.g. `"add_todo" | "remove_todo"`. */
export type ToolNameOf<TTools extends readonly ToolDefinition[]> = TTools[number]["name"];

/**
 * The folder a session works in.
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
  eventEmittedAt: string;
  /** The turn the event belongs to, when there is one (SDK-local, opaque: do not parse it). */
  turnId?: string;
  /** Whether that turn was a user message or a prepare turn. */
  turnKind?: TurnKind;
  /** The tool call the event is about, for tool events. */
  toolRequestId?: string;
  /** The assistant message a chat delta or chat message belongs to. */
  messageId?: string;
  /** Core's per-session sequence number of the event (absent for `source: "sdk"`). */
  seq?: number;
}

/**
 * A completed assistant message.
 *
 * @example
 * ```ts
 * session.onChat((message) => render(message.messageId, message.text));
 * ```
 */
export interface ChatMessage {
  /** Identifies the message; the chat deltas that built it carry the same id in their context. */
  messageId: string;
  /** The full text of the message. */
  text: string;
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
export interface ApprovalStatus {
  /** False when the extension could not be reached from this page. */
  installed: boolean;
  /** True when the user approved this origin. */
  approved: boolean;
  /** The origin the extension saw (or `location.origin` when it could not be reached). */
  origin: string;
  /** True when the extension holds a live connection to the desktop runtime. */
  appConnected: boolean;
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
export interface ProviderAvailability {
  code: ProviderCode;
  /** The product's name, e.g. "Claude Code". */
  name: string;
  available: boolean;
  /** A sentence the user can act on when `available` is false; null otherwise. */
  error: string | null;
}

/**
 * The user's defaults in Pedelec Desktop. Secrets and local paths are never included.
 *
 * @example
 * ```ts
 * const { defaultProvider } = await pedelec.getSettings();
 * ```
 */
export interface PedelecSettings {
  defaultProvider: ProviderCode | null;
  defaultEffortLevel: EffortLevel;
  defaultModels: Partial<Record<ProviderCode, string>>;
}
