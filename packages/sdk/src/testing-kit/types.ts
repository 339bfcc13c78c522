import type { ErrorCode } from "@pedelec/protocol/error-codes";
import type { PageRequestPayload, PageRequestResult, PageRequestType } from "@pedelec/protocol/page-wire";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionInfo, ToolResultOutcome } from "@pedelec/protocol/requests";
import type { Activity, SessionEvent, SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { ToolManifestEntry } from "@pedelec/protocol/tool-schema";
import type { EffortLevel, JsonValue, ProviderCode, SessionEndReason, TokenUsage, TurnKind } from "../types.js";

/**
 * The slice of `chrome.runtime` the SDK uses (`connect()` and `lastError`), as the kit's stand-in provides it.
 *
 * @example
 * ```ts
 * const runtime: TestKitChromeRuntime = kit.runtime;
 * ```
 */
export interface TestKitChromeRuntime {
  /** Opens a port to the stand-in extension, as `chrome.runtime.connect(extensionId, { name })` does. */
  connect(extensionId: string, connectInfo: { name: string }): TestKitChromePort;
  /** Set only while a port's onDisconnect listeners run, when the extension closed it with an error. */
  readonly lastError?:
    | {
        /** Chrome's text for why the port closed. */
        message?: string;
      }
    | undefined;
}

/**
 * A port to the stand-in extension: the slice of `chrome.runtime.Port` the SDK uses.
 *
 * @example
 * ```ts
 * const port: TestKitChromePort = kit.runtime.connect("any-extension-id", { name: "pedelec-sdk" });
 * ```
 */
export interface TestKitChromePort {
  /** Sends a message to the extension (a JSON copy, delivered asynchronously). Throws once the port is disconnected. */
  postMessage(message: unknown): void;
  /** Closes the port from the page's side; the page's own onDisconnect listeners are not called. */
  disconnect(): void;
  /** Messages from the extension. */
  readonly onMessage: {
    /** Calls `listener` with each message the extension sends on this port. */
    addListener(listener: (message: unknown) => void): void;
  };
  /** Called when the extension closes the port. */
  readonly onDisconnect: {
    /** Calls `listener` once, when the extension closes this port. */
    addListener(listener: () => void): void;
  };
}

/**
 * A session as the desktop runtime reports it on create and resume (the same shape the extension hands a page).
 *
 * @example
 * ```ts
 * const [info] = kit.sessions;
 * expect(info?.toolNames).toEqual(["add_todo"]);
 * ```
 */
export type TestKitSessionInfo = SessionInfo;

/**
 * One session event as it reaches a page: the event plus the session id, its per-session `seq` and `emittedAt`.
 *
 * @example
 * ```ts
 * const types = kit.events(session.sessionId).map((envelope) => envelope.event.type);
 * ```
 */
export type TestKitEventEnvelope = SessionEventEnvelope;

/**
 * A session event (`status-changed`, `turn-started`, `chat-delta`, `tool-call-requested`, …).
 *
 * @example
 * ```ts
 * const isEnd = (event: TestKitEvent) => event.type === "turn-completed" || event.type === "turn-failed";
 * ```
 */
export type TestKitEvent = SessionEvent;

/**
 * A tool as the page declared it to the desktop runtime: name, description, argsSchema, optional timeoutMs.
 *
 * @example
 * ```ts
 * kit.agent.onTurn((turn) => turn.complete(turn.tools.map((tool) => tool.name).join(", ")));
 * ```
 */
export type TestKitTool = ToolManifestEntry;

/**
 * What a page answered for a tool call: `{ ok: true, result }` or `{ ok: false, error: { code, message } }`.
 *
 * @example
 * ```ts
 * expect(kit.toolCalls[0]?.answer).toEqual({ ok: true, result: { id: "t1" } });
 * ```
 */
export type TestKitToolAnswer = ToolResultOutcome;

/**
 * What the stand-in says about one provider: `true` (installed and signed in), `false` (not installed), or a
 * sentence saying why it cannot run, as `listProviders()` reports it (e.g. `"not signed in — run codex login"`).
 *
 * @example
 * ```ts
 * const kit = createPedelecTestKit({ providers: { codex: "not signed in — run `codex login`", ollama: false } });
 * ```
 */
export type TestKitProviderState = boolean | string;

/**
 * The user's answer to the extension's approval question for the page's origin: `"approved"` (already approved),
 * `"denied"` (createSession and resumeSession reject with `APPROVAL_REJECTED`), or `"pending"` (they wait, the bridge
 * timeout paused, until `kit.approve()` or `kit.deny()`; `APPROVAL_TIMEOUT` after the kit's wait deadline).
 *
 * @example
 * ```ts
 * const kit = createPedelecTestKit({ approval: "pending" });
 * ```
 */
export type TestKitApproval = "approved" | "denied" | "pending";

/**
 * The desktop settings a page may read (`pedelec.getSettings()`); the kit's session defaults come from them too.
 *
 * @example
 * ```ts
 * const kit = createPedelecTestKit({ settings: { defaultProvider: null } }); // createSession() → DEFAULT_PROVIDER_NOT_SET
 * ```
 */
export interface TestKitSettings {
  /** The provider of a session created without one (default `"claude"`); null: none is set. */
  defaultProvider?: ProviderCode | null;
  /** The effort level of a session created without one (default `"medium"`). */
  defaultEffortLevel?: EffortLevel;
  /** The model of a session created with a provider but no model. */
  defaultModels?: Partial<Record<ProviderCode, string>>;
}

/**
 * Options of `createPedelecTestKit()`. Every field is optional.
 *
 * @example
 * ```ts
 * const kit = createPedelecTestKit({ origin: "https://app.test", approval: "pending", toolTimeoutMs: 500 });
 * ```
 */
export interface PedelecTestKitOptions {
  /** The origin the pages of this kit have, as the extension would read it from the tab (default `"https://app.test"`). */
  origin?: string;
  /** The approval state of the origin (default `"approved"`). */
  approval?: TestKitApproval;
  /** Which providers are available; those not named are (default: all of them). */
  providers?: Partial<Record<ProviderCode, TestKitProviderState>>;
  /** The desktop's defaults. */
  settings?: TestKitSettings;
  /** Whether the user granted this origin Full Access in the extension (default false: `FULL_ACCESS_NOT_GRANTED`). */
  fullAccess?: boolean;
  /**
   * Whether `session.prepare()` starts a hidden prepare turn (default true). False answers as a provider that starts a
   * fresh conversation every turn does: nothing to prepare.
   */
  prepareTurns?: boolean;
  /** The bridge timeout of the kit's clients in milliseconds (default 5000; the SDK's own default is 30000). */
  bridgeTimeoutMs?: number;
  /**
   * The most a tool call waits for a page's answer, in milliseconds (default 2000): `turn.callTool()` then rejects with
   * `TOOL_TIMEOUT` and the page sees the call settle as `timed-out`. A tool's own smaller `timeoutMs` wins.
   */
  toolTimeoutMs?: number;
  /**
   * How long a turn may go without any sign of its agent script (a delta, an activity, a tool call, its end) before it
   * fails with `PROVIDER_FAILED`, as the desktop stops a silent provider (default 5000 ms; tool waits excluded).
   */
  agentIdleTimeoutMs?: number;
  /** Deadline of the kit's waits in milliseconds: `nextTurn()`, `waitForRequest()`, a pending approval (default 2000). */
  waitTimeoutMs?: number;
}

/**
 * Options of `kit.createClient()`.
 *
 * @example
 * ```ts
 * const secondTab = kit.createClient({ name: "tab-2" });
 * ```
 */
export interface TestKitClientOptions {
  /** A label for this page in `kit.toolCalls[n].claimedBy` and `kit.requests[n].page` (default `"page-<n>"`). */
  name?: string;
  /** This client's bridge timeout (default: the kit's `bridgeTimeoutMs`). */
  bridgeTimeoutMs?: number;
}

/**
 * A request a page sent to the stand-in, after the extension's checks of its shape.
 *
 * @example
 * ```ts
 * const [create] = kit.requestsOf("createSession");
 * expect(create?.payload).toMatchObject({ provider: "claude" });
 * ```
 */
export interface TestKitRequest {
  /** The request type, e.g. `"sendText"`. */
  type: string;
  /** The payload as the page sent it (a JSON copy). */
  payload: unknown;
  /** The label of the page that sent it. */
  page: string;
}

/**
 * One tool call the scripted agent made, and what became of it.
 *
 * @example
 * ```ts
 * expect(kit.toolCalls.map((call) => [call.toolName, call.outcome, call.claimedBy])).toEqual([["add_todo", "answered", "page-1"]]);
 * ```
 */
export interface TestKitToolCall {
  /** The session it belongs to. */
  sessionId: string;
  /** The turn it belongs to. */
  turnId: string;
  /** The call's id, as the page's handler context sees it. */
  toolRequestId: string;
  /** The tool's name. */
  toolName: string;
  /** The arguments as sent to the page. */
  args: JsonValue;
  /** The deadline of the call in milliseconds. */
  timeoutMs: number;
  /** `"pending"` while it waits; then how it settled, as the page's `tool-call-settled` event says. */
  outcome: "pending" | "answered" | "timed-out" | "cancelled" | "abandoned";
  /** The label of the page whose claim was granted, once one was. */
  claimedBy: string | undefined;
  /** The page's answer, once it arrived. */
  answer: TestKitToolAnswer | undefined;
}

/**
 * Options of `turn.callTool()`.
 *
 * @example
 * ```ts
 * await turn.callTool("add_todo", { title: "" }, { checkArgs: false }); // let the page's own validation answer
 * ```
 */
export interface ScriptedToolCallOptions {
  /** This call's deadline in milliseconds (default: the tool's `timeoutMs`, capped by the kit's `toolTimeoutMs`). */
  timeoutMs?: number;
  /**
   * Check the arguments against the tool's argsSchema first, as the desktop does, rejecting with `TOOL_ARGS_INVALID`
   * without the page seeing the call (default true). False hands any JSON to the page, to test its own checks.
   */
  checkArgs?: boolean;
}

/** A file the script says the agent wrote into the assets folder: `turn.artifact()`. */
export interface ScriptedArtifact {
  /** Its asset path, e.g. `"/charts/sales.png"` (the rule of asset paths applies). */
  path: string;
  /** Default 0. */
  sizeBytes?: number;
  /** Default `"application/octet-stream"`; the kind follows from it, as the desktop derives it. */
  mediaType?: string;
}

/**
 * An activity for `turn.activity()`: what the agent is doing besides talking.
 *
 * @example
 * ```ts
 * const id = turn.activity({ kind: "command", status: "started", title: "npm test" });
 * turn.activity({ id, kind: "command", status: "completed", title: "npm test", detail: "12 passed" });
 * ```
 */
export interface ScriptedActivity {
  /** Stable within the turn, to update an earlier activity (default: a new id). */
  id?: string;
  /** Default `"other"`. */
  kind?: Activity["kind"];
  /** Default `"completed"`. */
  status?: Activity["status"];
  /** Short human text, e.g. the command line or the file path. */
  title: string;
  /** Longer output or details. */
  detail?: string;
}

/**
 * How a scripted turn ended, as `turn.finished` reports it.
 *
 * @example
 * ```ts
 * const end = await turn.finished;
 * if (!end.ok) expect(end.error.code).toBe("TURN_CANCELLED");
 * ```
 */
export type ScriptedTurnEnd =
  | {
      /** The turn completed. */
      ok: true;
    }
  | {
      /** The turn failed, was cancelled or stopped. */
      ok: false;
      /** Why: the code the page's `sendText()` rejected with (`TURN_CANCELLED`, `SESSION_ENDED`, …). */
      error: PedelecError;
    };

/**
 * One turn of the scripted agent: what the page sent, and the ways to answer it as the desktop runtime would.
 * Everything it emits is checked against the protocol's schemas. Once the turn is over (completed, failed, cancelled,
 * the session ended, the desktop lost) further calls do nothing, as the desktop ignores a stopped provider.
 *
 * @example
 * ```ts
 * kit.agent.onTurn(async (turn) => {
 *   turn.activity("Reading the board");
 *   const cards = await turn.callTool("list_todos", {});
 *   turn.delta("There are ");
 *   turn.delta(`${(cards as unknown[]).length} cards.`);
 *   turn.complete();
 * });
 * ```
 */
export interface ScriptedTurn {
  /** The turn's id (chosen by the page's SDK). */
  readonly turnId: string;
  /** `"user"` for `sendText()`, `"prepare"` for `prepare()` (whose chat the page hides). */
  readonly kind: TurnKind;
  /** The user's message (for a prepare turn, the desktop's own warm-up text). */
  readonly text: string;
  /** The session as it was when the turn started. */
  readonly session: TestKitSessionInfo;
  /** The app's guidance for the agent, from `createSession({ skills })`. */
  readonly guidance: string;
  /** The page's tools, as declared to the desktop. */
  readonly tools: readonly TestKitTool[];
  /** True for the session's first turn, whose prompt carries the guidance and the tool index. */
  readonly isFirstTurn: boolean;
  /** Aborts when the turn is stopped from outside: cancel, end, the desktop lost, the idle deadline. */
  readonly signal: AbortSignal;
  /** True once the turn is over. */
  readonly over: boolean;
  /** Settles when the turn is over, with how it ended; never rejects. */
  readonly finished: Promise<ScriptedTurnEnd>;
  /** Streams text of the current assistant message (`onChatDelta`); deltas of one tick are joined as the desktop does. */
  delta(text: string): void;
  /**
   * Completes the current assistant message (`onChat`) with `text`, or with its deltas joined; a message with no
   * deltas also goes out as one delta first, as for a provider that does not stream. Later deltas start a new message.
   * Returns the message id.
   */
  message(text?: string): string | undefined;
  /** Reports an activity (a string is a completed activity of kind `"other"`); returns its id. */
  activity(activity: string | ScriptedActivity): string;
  /**
   * Reports the tokens the turn used so far, as a provider does and the desktop takes it: cumulative within the turn,
   * so each report replaces the turn's previous one (a count lower than before is ignored), while the session's total
   * adds the turns up. The page gets both in a `usage-updated` event (`session.usage`, `onUsage`); reports of one tick
   * are joined into one event, as the desktop joins those of a display frame. Throws a TypeError for a count that is
   * not a non-negative integer, or a field `TokenUsage` does not have.
   *
   * @example
   * ```ts
   * kit.agent.onTurn((turn) => {
   *   turn.usage({ inputTokens: 1_200, cachedInputTokens: 1_000 });
   *   turn.delta("Done.");
   *   turn.usage({ inputTokens: 1_200, cachedInputTokens: 1_000, outputTokens: 3, totalTokens: 1_203 });
   *   turn.complete();
   * });
   * ```
   */
  usage(usage: TokenUsage): void;
  /**
   * Reports a file the agent wrote into the session's assets folder. As the desktop does, the page's `onArtifact`
   * hears of it when the turn ends, before the turn's status change, in the order reported (a path reported twice
   * once, as last reported). Throws a TypeError for a path the asset-path rule refuses.
   *
   * @example
   * ```ts
   * kit.agent.onTurn((turn) => {
   *   turn.artifact({ path: "/charts/sales.png", sizeBytes: 2_048, mediaType: "image/png" });
   *   turn.complete("Drew the chart.");
   * });
   * ```
   */
  artifact(artifact: ScriptedArtifact): void;
  /**
   * Calls one of the page's tools and resolves with the page's result. Rejects with a PedelecError: `TOOL_NOT_FOUND`
   * (not declared), `TOOL_ARGS_INVALID` (the desktop's check, or the page's), the page's code (`TOOL_HANDLER_ERROR`,
   * `TOOL_HANDLER_NOT_FOUND`, `TOOL_RESULT_INVALID`, …), `TOOL_TIMEOUT` (no answer in time, with a message saying
   * whether any page claimed the call), or the turn's stop reason.
   */
  callTool<TResult = JsonValue>(toolName: string, args?: unknown, options?: ScriptedToolCallOptions): Promise<TResult>;
  /** Ends the turn successfully (`turn-completed`), completing the current message first (with `text` when given). */
  complete(text?: string): void;
  /** Ends the turn with an error (`turn-failed`): the page's `sendText()` rejects with this code. */
  fail(code: ErrorCode, message?: string, details?: unknown): void;
}

/**
 * The agent script: how each turn of every session of the kit is answered.
 *
 * @example
 * ```ts
 * kit.agent.onTurn((turn) => turn.complete(`You said: ${turn.text}`));
 * ```
 */
export interface ScriptedAgent {
  /**
   * Answers every turn with `handler` (the newest registration wins; returns the unregister function). A turn whose
   * handler returns without ending it completes; one whose handler throws fails with the thrown PedelecError's code,
   * or `PROVIDER_FAILED` for anything else.
   */
  onTurn(handler: (turn: ScriptedTurn) => void | Promise<void>): () => void;
  /**
   * The next turn to start (or one already waiting for a script), for a test that drives it step by step; such a turn
   * stays open until the test ends it. Rejects after the kit's wait deadline (or `options.timeoutMs`).
   */
  nextTurn(options?: { timeoutMs?: number }): Promise<ScriptedTurn>;
}

/**
 * Answers one page request type in place of the stand-in (for script runs and assets, which the kit does not run, or
 * to make any request fail). Throw a PedelecError to answer with an error. The result is checked against the
 * protocol's schema.
 *
 * @example
 * ```ts
 * kit.onRequest("listAssets", () => [{ name: "a.txt", path: "/a.txt", sizeBytes: 3, modifiedAt: new Date().toISOString() }]);
 * ```
 */
export type TestKitRequestHandler<TType extends PageRequestType> = (
  payload: PageRequestPayload<TType>,
  context: { origin: string; page: string },
) => PageRequestResult<TType> | Promise<PageRequestResult<TType>>;

/**
 * How the desktop runtime goes away in `kit.loseCore()`: `"killed"` (default: the running turn vanishes, and when the
 * desktop is back it is failed with `SESSION_ERROR`) or `"stopped"` (a clean stop: the turn fails with `SESSION_ERROR`
 * first).
 *
 * @example
 * ```ts
 * kit.loseCore({ how: "stopped" });
 * ```
 */
export interface LoseCoreOptions {
  /** Default `"killed"`. */
  how?: "killed" | "stopped";
}

/**
 * A reason for `kit.endSession()`.
 *
 * @example
 * ```ts
 * kit.endSession(session.sessionId, "expired");
 * ```
 */
export type TestKitEndReason = SessionEndReason;
