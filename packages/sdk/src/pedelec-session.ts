import type { EffortLevel, ExplicitEffort, ProviderCode, SessionStatus, TurnKind } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { PageRequestPayload, PageRequestResult } from "@pedelec/protocol/page-wire";
import type { SessionInfo, ToolResultOutcome } from "@pedelec/protocol/requests";
import type { Activity, PendingToolCall, SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { highestUsage, TOKEN_USAGE_FIELDS } from "@pedelec/protocol/session-usage";
import { sessionMirrorState, stepSessionMirror, type SessionMirrorInput, type SessionMirrorState } from "@pedelec/protocol/session-mirror";
import { abortError, checkSignal } from "./abort.js";
import type { Bridge, BridgeAnswer } from "./bridge.js";
import { ListenerSet, reportCallbackError } from "./listener-set.js";
import { createOwnTurn, settleOwnTurn, type OwnTurn } from "./own-turn.js";
import { randomId } from "./random-id.js";
import { validateRequestPayload } from "./request-validation.js";
import type { ToolCallLedger } from "./tool-call-ledger.js";
import { ToolDispatcher } from "./tool-dispatch.js";
import type { ArgsValidator } from "./tool-schema/tool-args-check.js";
import { WorkspaceRuns } from "./workspace-runs.js";
import { SessionAssets } from "./session-assets.js";
import { SessionEventContexts, type ContextExtras } from "./session-event-context.js";
import type { UploadBody } from "./asset-upload-body.js";
import type {
  Artifact,
  AssetEntry,
  AssetReadKind,
  AssetReadOptions,
  AssetUploadOptions,
  ChatMessage,
  JsonValue,
  PedelecEventContext,
  PedelecRunOptions,
  PedelecWorkspace,
  SendTextOptions,
  TokenUsage,
  ToolArgsFor,
  ToolHandler,
} from "./types.js";

/** What `Pedelec` hands a new session handle. Not part of the public API. */
export interface SessionInit {
  readonly info: SessionInfo;
  /** The bridge connection that carried the create/resume answer, i.e. the one subscribed to the events. */
  readonly generation: number;
  readonly bridge: Bridge;
  readonly inlineHandlers: ReadonlyMap<string, ToolHandler>;
  /** The page's argument check of each tool it was given, run before any handler. */
  readonly argsValidators?: ReadonlyMap<string, ArgsValidator>;
  /** The tool calls this page's client has taken, shared by its handles. */
  readonly toolCalls: ToolCallLedger;
  /** A resume's `afterSeq`: Core replays the kept events after it, and the handle takes them. */
  readonly afterSeq?: number;
  /**
   * Set for a resumed handle: events that came with the answer. They, the replay and the still-pending tool calls are
   * handled only after the caller got the handle, so the callbacks it registers at once see them.
   */
  readonly backlog?: readonly SessionEventEnvelope[];
  /** Sends asset upload bodies (default: XMLHttpRequest in a page). */
  readonly uploadBody?: UploadBody;
}

/** The usage of a session before any report. */
const NO_USAGE: TokenUsage = Object.freeze({});

/** Ways a turn stops on purpose; they end the turn's promise but are not error events. */
const INTENDED_STOPS: ReadonlySet<string> = new Set(["TURN_CANCELLED", "SESSION_ENDED"]);
/** Failures of a request that was in flight when a link on the way to Core broke: it may have arrived or not. */
const LINK_BROKE_IN_FLIGHT: ReadonlySet<string> = new Set(["CORE_RUNTIME_UNAVAILABLE", "NATIVE_CONNECTION_CLOSED", "EXTENSION_DISCONNECTED"]);
/** When to try re-attaching after the port died, each delay after the previous try failed (about 4.5 s in all). */
const EAGER_REATTACH_DELAYS_MS = [50, 250, 1_000, 3_000];

/**
 * One agent session. Get it from `pedelec.createSession()` or `pedelec.resumeSession()`.
 *
 * @example
 * ```ts
 * const session = await pedelec.createSession({ provider: "claude" });
 * const stop = session.onChatDelta((delta) => output.append(delta));
 * await session.sendText("Summarize the board.");
 * stop();
 * await session.end();
 * ```
 */
export class PedelecSession<TToolName extends string = string, TToolArgs = Record<TToolName, unknown>> {
  /** Core's id of the session (also its thread id). */
  readonly sessionId: string;
  /** The agent backend the session runs on. */
  readonly provider: ProviderCode;
  /** The effort profile snapshotted at creation; undefined for a session created with an explicit `effort`. */
  readonly effortLevel: EffortLevel | undefined;
  /** The explicit effort the session was created with (its provider's own knob); undefined on an effort profile. */
  readonly effort: ExplicitEffort | undefined;
  /** The model the session uses, when one was chosen. */
  readonly model: string | undefined;
  /** ISO 8601 time Core created the session. */
  readonly sessionCreatedAt: string;
  /** The folder the agent works in; `workspace.run()` runs scripts in it. */
  readonly workspace: PedelecWorkspace;

  readonly #bridge: Bridge;
  readonly #tools: ToolDispatcher;
  readonly #runs: WorkspaceRuns;
  readonly #assets: SessionAssets;
  readonly #unsubscribeBridge: Array<() => void>;
  #generation: number | undefined;
  /** The link to Core broke under a live port: events may be missing, so the next call re-attaches with afterSeq. */
  #needsReattach = false;
  #resubscribing: Promise<void> | undefined;
  /** The session's state as Core's events and answers show it (the status callbacks report its changes). */
  #mirror: SessionMirrorState;
  #lastSeq: number;
  /** Events up to this seq are a replay of what happened before the latest create/resume/re-attach answer. */
  #replayThrough: number;
  /** The tool calls pending at that answer: the only ones a replayed request may start. */
  #pendingAtAttach: ReadonlySet<string>;
  /** Events held back until the caller of resumeSession() got the handle. */
  #deferred: SessionEventEnvelope[] | undefined;
  #deferredTimer: ReturnType<typeof setTimeout> | undefined;
  /** The next eager re-attach after the port died (see #reattachSoon). */
  #reattachTimer: ReturnType<typeof setTimeout> | undefined;
  /** Events that arrive while a re-attach waits for its answer: handled once the answer told where the replay ends. */
  #held: SessionEventEnvelope[] | undefined;
  #ownTurn: OwnTurn | undefined;
  #preparing: Promise<void> | undefined;
  /** Builds callbacks' contexts and remembers recent turns' kinds. */
  readonly #contexts: SessionEventContexts;
  /** Turns whose failure the SDK already reported when the link broke; Core's own failure of them is not news. */
  readonly #interruptedTurns = new Set<string>();
  #endedBy: "core" | "sdk" | undefined;
  #endContext: PedelecEventContext | undefined;
  #endRequest: Promise<void> | undefined;
  /** The session's total as Core last reported it (frozen; replaced, never changed, so it can be compared by identity). */
  #usage: TokenUsage = NO_USAGE;

  readonly #chatDeltaListeners = new ListenerSet<[string, PedelecEventContext]>();
  readonly #chatListeners = new ListenerSet<[ChatMessage, PedelecEventContext]>();
  readonly #statusListeners = new ListenerSet<[SessionStatus, PedelecEventContext]>();
  readonly #activityListeners = new ListenerSet<[Activity, PedelecEventContext]>();
  readonly #usageListeners = new ListenerSet<[TokenUsage, PedelecEventContext]>();
  readonly #artifactListeners = new ListenerSet<[Artifact, PedelecEventContext]>();
  readonly #errorListeners = new ListenerSet<[PedelecError, PedelecEventContext]>();
  readonly #endedListeners = new ListenerSet<[PedelecEventContext]>();

  /** @internal Sessions come from `pedelec.createSession()` and `pedelec.resumeSession()`. */
  constructor(init: SessionInit) {
    const { info } = init;
    this.sessionId = info.sessionId;
    this.provider = info.provider;
    this.effortLevel = info.effortLevel ?? undefined;
    this.effort = info.effort ?? undefined;
    this.model = info.model ?? undefined;
    this.sessionCreatedAt = info.sessionCreatedAt;
    this.#bridge = init.bridge;
    this.#runs = new WorkspaceRuns({
      sessionId: info.sessionId,
      bridge: init.bridge,
      ready: () => this.#ensureSubscribed(),
      refusal: () => (this.#endedBy === undefined ? undefined : sessionEnded()),
    });
    this.#assets = new SessionAssets({
      sessionId: info.sessionId,
      bridge: init.bridge,
      ready: () => this.#ensureSubscribed(),
      refusal: () => (this.#endedBy === undefined ? undefined : sessionEnded()),
      ...(init.uploadBody === undefined ? {} : { uploadBody: init.uploadBody }),
    });
    this.workspace = Object.freeze({
      path: info.workspace.path,
      managed: info.workspace.managed,
      run: (options: PedelecRunOptions) => this.#runs.run(options),
      listFiles: (path?: string) => this.#listWorkspace("files", path),
      listFolders: (path?: string) => this.#listWorkspace("folders", path),
    });
    this.#generation = init.generation;
    this.#contexts = new SessionEventContexts(info.sessionId, info.provider);
    this.#mirror = sessionMirrorState(info);
    this.#usage = raisedUsage(NO_USAGE, info.usage);
    // A stale afterSeq (newer than anything Core has) would hide every event to come.
    this.#lastSeq = init.afterSeq === undefined ? info.lastSeq : Math.min(init.afterSeq, info.lastSeq);
    this.#replayThrough = info.lastSeq;
    this.#pendingAtAttach = new Set(info.pendingToolCalls.map((call) => call.toolRequestId));
    if (info.activeTurn !== null) this.#noteTurn(info.activeTurn.turnId, info.activeTurn.turnKind);
    this.#tools = new ToolDispatcher({
      sessionId: info.sessionId,
      inlineHandlers: init.inlineHandlers,
      argsValidators: init.argsValidators,
      ledger: init.toolCalls,
      claim: (toolRequestId) => this.#claimToolCall(toolRequestId),
      submit: (toolRequestId, outcome) => this.#submitToolResult(toolRequestId, outcome),
      reportFailure: (error, call) => this.#errorListeners.emit(error, this.#sdkContext({ turnId: call.turnId, toolRequestId: call.toolRequestId })),
    });
    this.#unsubscribeBridge = [
      init.bridge.onEvent((envelope) => this.#handleEnvelope(envelope)),
      init.bridge.onDisconnect((generation, error) => this.#handleDisconnect(generation, error)),
      init.bridge.onInterruption((sessionId, error) => {
        if (sessionId !== this.sessionId || this.#endedBy !== undefined) return;
        this.#needsReattach = true;
        this.#interrupt(error);
      }),
      init.bridge.onProtocolError((error, sessionId) => {
        if (sessionId === undefined || sessionId === this.sessionId) this.#errorListeners.emit(error, this.#sdkContext());
      }),
    ];
    if (info.status === "ended") {
      this.#finish("core", this.#coreContext());
      return;
    }
    if (init.backlog === undefined) {
      this.#dispatchPending(info.pendingToolCalls);
      return;
    }
    this.#deferred = [...init.backlog];
    this.#deferredTimer = setTimeout(() => this.#releaseDeferred(info.pendingToolCalls), 0);
  }

  /** The session's current status as Core last reported it: `idle | running | waiting_tool_result | ended | error`. */
  getStatus(): SessionStatus {
    return this.#mirror.status;
  }

  /**
   * The tokens the session used so far, over all its turns (prepare turns too, and those before a reload or a Desktop
   * restart): Core's running total, `{}` before any report. A field is present once the provider reported that count.
   * It never goes down; `onUsage` tells when it changes. The object is replaced on each change, never modified.
   *
   * @example
   * ```ts
   * const session = await pedelec.resumeSession(savedSessionId);
   * counter.textContent = `${session.usage.totalTokens ?? 0} tokens so far`;
   * ```
   */
  get usage(): TokenUsage {
    return this.#usage;
  }

  /**
   * The seq of the newest Core event this handle took (0 before any). Save it to resume after a reload without
   * missing or repeating events: `pedelec.resumeSession(sessionId, { afterSeq })`.
   */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /**
   * Sends a user message and resolves when the agent's turn completes. Rejects with the turn's error code when
   * it fails, `SESSION_BUSY` while another turn of this session is active (a prepare turn too), `SESSION_ENDED` once it
   * ended. `options.signal` stops it: see `SendTextOptions`.
   *
   * Should the link to Core break while the message is on its way (Core restarted, the extension's worker restarted),
   * the SDK re-attaches and sends it again once under the same turn id; Core runs a turn id once, so the agent gets the
   * message once. It rejects with the link's error only if re-attaching fails.
   *
   * @example
   * ```ts
   * try { await session.sendText("Add milk to the list."); }
   * catch (error) { if (error instanceof PedelecError && error.code === "SESSION_BUSY") showBusy(); }
   * ```
   */
  sendText(text: string, options?: SendTextOptions): Promise<void> {
    if (this.#endedBy !== undefined) return Promise.reject(sessionEnded());
    if (this.#ownTurn !== undefined) return Promise.reject(sessionBusy());
    const turnId = randomId();
    let payload: PageRequestPayload<"sendText">;
    let signal: AbortSignal | undefined;
    try {
      signal = checkSignal(options?.signal, "sendText");
      payload = validateRequestPayload("sendText", { sessionId: this.sessionId, turnId, text });
    } catch (error) {
      return Promise.reject(error);
    }
    if (signal?.aborted) return Promise.reject(turnAborted(signal));
    return this.#runTurn("user", turnId, signal, async (markSent, turn) => {
      try {
        await this.#request("sendText", payload, signal, markSent);
      } catch (error) {
        if (!LINK_BROKE_IN_FLIGHT.has(PedelecError.from(error, "SDK_TRANSPORT_ERROR").code) || this.#endedBy !== undefined) throw error;
        // Core may have started the turn before the link broke, or never heard of it. Once re-attached (which replays
        // what happened meanwhile), the same turn id goes again: Core starts it only if it never did.
        this.#needsReattach = true;
        turn.linkLostMeanwhile = undefined;
        turn.sentAgain = true;
        await this.#request("sendText", payload, signal);
        // The turn goes on in this Core: a failure of it is news, not the one the broken link already reported.
        this.#interruptedTurns.delete(turnId);
      }
      return turnId;
    });
  }

  /**
   * Warms the session up: the Desktop gives the agent its first prompt (the app's guidance and tool index) in a hidden
   * "prepare" turn, so the first real message is answered sooner. Its chat never reaches `onChatDelta` / `onChat`
   * (status and activity callbacks see it, with `context.turnKind === "prepare"`). Idempotent: every call returns the
   * same promise (after a rejection the next call tries again). Resolves at once when there is nothing to prepare
   * (a turn already ran, or the provider starts afresh each turn).
   *
   * Rejects with `SESSION_BUSY` while a turn runs, `SESSION_ENDED` when the session ends, and `PREPARE_FAILED` (the
   * cause in `details.cause`) when the prepare turn fails. `sendText()` rejects with `SESSION_BUSY` until it is done.
   *
   * @example
   * ```ts
   * const session = await pedelec.createSession({ skills: { guidance: "You keep a todo list.", tools: [] } });
   * void session.prepare().catch(() => {}); // the first sendText() simply starts cold if this failed
   * ```
   */
  prepare(): Promise<void> {
    if (this.#preparing !== undefined) return this.#preparing;
    const preparing = this.#startPrepare();
    this.#preparing = preparing;
    preparing.then(undefined, () => {
      if (this.#preparing === preparing) this.#preparing = undefined;
    });
    return preparing;
  }

  /**
   * Stops the active turn and resolves once it is over: Core has killed the provider's whole process group. The pending
   * `sendText()` rejects with `TURN_CANCELLED`.
   */
  async cancel(): Promise<void> {
    if (this.#endedBy !== undefined) return;
    await this.#request("cancelTurn", { sessionId: this.sessionId });
  }

  /**
   * Ends the session. Idempotent. A pending `sendText()` or `prepare()` rejects with `SESSION_ENDED` at once, running
   * tool handlers are aborted, and `onEnded` fires (with `endReason: "requested"`).
   */
  end(): Promise<void> {
    if (this.#endRequest !== undefined) return this.#endRequest;
    if (this.#endedBy === "core") return Promise.resolve();
    this.#finish("sdk", this.#sdkContext({ endReason: "requested" }));
    const request = this.#bridge.request("endSession", { sessionId: this.sessionId }).then(
      () => undefined,
      (error: unknown) => {
        const failure = PedelecError.from(error, "END_SESSION_FAILED");
        // Already gone on Core's side: that is what end() wanted.
        if (failure.code === "THREAD_NOT_FOUND" || failure.code === "SESSION_ENDED") return;
        this.#endRequest = undefined; // so a later end() retries
        throw failure;
      },
    );
    this.#endRequest = request;
    return request;
  }

  /**
   * Copies a file into the session's assets (the workspace's `.pedelec-runtime/assets/`, where the agent finds it)
   * and resolves with its asset path. The body goes straight to the Pedelec Desktop over a single-use loopback
   * transfer; an existing file at that path is replaced. One upload at a time per session.
   *
   * `targetPath` defaults to `"/" + file.name`. Rejects with `ASSET_PATH_INVALID` (checked before anything is sent),
   * `ASSET_TOO_LARGE` (over 100 MiB, also checked first), `INVALID_INPUT` (a Blob without a name and no targetPath),
   * `ASSET_UPLOAD_FAILED` (also when `options.signal` aborts: "The upload was cancelled"),
   * `ASSET_UPLOAD_SERVER_UNAVAILABLE` (the Desktop's asset server could not be reached), the Desktop's own refusals
   * (`ASSET_NOT_FILE`, `ASSET_UPLOAD_SIZE_MISMATCH`, `ASSET_UPLOAD_TICKET_EXPIRED`, `ASSET_UPLOAD_UNAUTHORIZED`,
   * `SESSION_BUSY` while another upload of the session runs) and `SESSION_ENDED`.
   *
   * @example
   * ```ts
   * const input = document.querySelector<HTMLInputElement>("input[type=file]")!;
   * const file = input.files![0]!;
   * const path = await session.uploadAsset(file, `/inbox/${file.name}`, {
   *   onProgress: ({ loadedBytes, totalBytes }) => console.log(`${Math.round((100 * loadedBytes) / totalBytes)}%`),
   * });
   * await session.sendText(`Summarize the asset ${path}.`);
   * ```
   */
  uploadAsset(file: Blob | File, targetPath?: string, options?: AssetUploadOptions): Promise<string> {
    return this.#assets.upload(file, targetPath, options);
  }

  /**
   * Every file among the session's assets, newest first: regular files only (symbolic links are neither listed nor
   * followed), Pedelec's own `.pedelec-*` names left out. Rejects with `ASSET_LIST_FAILED` or `SESSION_ENDED`.
   *
   * @example
   * ```ts
   * const reports = (await session.listAssets()).filter((asset) => asset.path.startsWith("/reports/"));
   * ```
   */
  listAssets(): Promise<AssetEntry[]> {
    return this.#assets.list();
  }

  /** `workspace.listFiles()` / `listFolders()`: the path is checked before anything is sent. */
  async #listWorkspace(kind: "files" | "folders", path: string | undefined): Promise<string[]> {
    if (this.#endedBy !== undefined) throw sessionEnded();
    const payload = validateRequestPayload("listWorkspaceEntries", { sessionId: this.sessionId, kind, ...(path === undefined ? {} : { path }) });
    await this.#ensureSubscribed();
    const answer = await this.#bridge.request("listWorkspaceEntries", payload);
    return answer.result.paths;
  }

  /**
   * Reads one of the session's assets (one the page uploaded, or a file the agent wrote under
   * `.pedelec-runtime/assets/`): as strict UTF-8 `"text"`, as parsed `"json"`, or as a `"file"` carrying the asset's
   * name, MIME type and modification time. Text and JSON reads take at most 16 MiB (`ASSET_READ_TOO_LARGE`, before
   * anything is downloaded); files up to 100 MiB.
   *
   * Rejects with `ASSET_PATH_INVALID` (checked before anything is sent), `ASSET_NOT_FOUND`, `ASSET_NOT_FILE`,
   * `ASSET_READ_TOO_LARGE`, `ASSET_TEXT_DECODE_FAILED` (not UTF-8), `ASSET_INVALID_JSON`, `ASSET_READ_FAILED` (the
   * transfer failed or was cancelled through `options.signal`), `ASSET_DOWNLOAD_TICKET_EXPIRED`,
   * `ASSET_DOWNLOAD_UNAUTHORIZED` and `SESSION_ENDED`.
   *
   * @example
   * ```ts
   * const summary = await session.readAsset("/out/summary.md", "text");
   * const data = await session.readAsset("/out/data.json", "json");
   * const image = await session.readAsset("/out/chart.png", "file");
   * preview.src = URL.createObjectURL(image);
   * ```
   */
  readAsset(path: string, as: "text", options?: AssetReadOptions): Promise<string>;
  readAsset(path: string, as: "json", options?: AssetReadOptions): Promise<JsonValue>;
  readAsset(path: string, as: "file", options?: AssetReadOptions): Promise<File>;
  readAsset(path: string, as: AssetReadKind, options?: AssetReadOptions): Promise<string | JsonValue | File>;
  readAsset(path: string, as: AssetReadKind, options?: AssetReadOptions): Promise<string | JsonValue | File> {
    return this.#assets.read(path, as, options);
  }

  /** Streamed assistant text, in order. `context.messageId` groups the pieces of one message. */
  onChatDelta(listener: (delta: string, context: PedelecEventContext) => void): () => void {
    return this.#chatDeltaListeners.add(listener);
  }

  /** A completed assistant message. */
  onChat(listener: (message: ChatMessage, context: PedelecEventContext) => void): () => void {
    return this.#chatListeners.add(listener);
  }

  /**
   * The session status, called only when it changes. It is Core's status (`context.source === "core"`), from its events
   * and from the create / resume answer; the SDK reports one itself (`source: "sdk"`) only where Core cannot: `error`
   * when the link to the extension or the Desktop broke during a turn, and `ended` when the page ended the session.
   */
  onStatus(listener: (status: SessionStatus, context: PedelecEventContext) => void): () => void {
    return this.#statusListeners.add(listener);
  }

  /**
   * Registers a tool handler: for one tool name, or (without a name) the generic fallback for tools that
   * have neither a named nor an inline handler. The newest registration wins; a named one replaces the tool's own
   * `handler` (registered by createSession / resumeSession) until it is unsubscribed. For a tool defined with a
   * Standard Schema (`args`), the handler's arguments are typed from the schema and are its output: the page checks
   * every call with the tool's schema first and answers an invalid one `TOOL_ARGS_INVALID` without running a handler.
   *
   * Each call runs once: the page claims it from the Desktop before the handler runs, so when several tabs follow the
   * session only one of them runs it (should that tab close unanswered, another one gets the call). `context.signal`
   * aborts when the call times out or is cancelled, its turn ends, the session ends or the link breaks.
   *
   * @example
   * ```ts
   * session.onTool("add_todo", (args, context) => addTodo(args, context.signal));
   * session.onTool((args, context) => ({ error: `unexpected tool ${context.toolName}` }));
   * ```
   */
  onTool(handler: ToolHandler): () => void;
  onTool<TName extends TToolName>(name: TName, handler: ToolHandler<TName, ToolArgsFor<TToolArgs, TName>>): () => void;
  onTool(nameOrHandler: string | ToolHandler, handler?: ToolHandler<string, never>): () => void {
    if (typeof nameOrHandler === "function") return this.#tools.register(undefined, nameOrHandler);
    if (typeof nameOrHandler !== "string" || typeof handler !== "function") {
      throw new PedelecError("INVALID_INPUT", "onTool takes a handler, or a tool name and a handler");
    }
    // The page checked the arguments against the tool's schema before any handler gets them.
    return this.#tools.register(nameOrHandler, handler as ToolHandler);
  }

  /**
   * A file the agent wrote or changed in the session's assets folder (`.pedelec-runtime/assets/`, where `readAsset()`
   * reads), reported when its turn ends and before the turn's status change, one call per file (at most 100 a turn;
   * the Desktop then reports an activity saying how many more). Events replayed on a resume with `afterSeq` call it
   * again; a page that resumes without `afterSeq` finds earlier artifacts with `listAssets()`.
   *
   * @example
   * ```ts
   * session.onArtifact(async (artifact) => {
   *   if (artifact.kind === "text") showText(await session.readAsset(artifact.path, "text"));
   * });
   * ```
   */
  onArtifact(listener: (artifact: Artifact, context: PedelecEventContext) => void): () => void {
    return this.#artifactListeners.add(listener);
  }

  /** Normalized provider activity: a command run, a file edited, a web search… */
  onActivity(listener: (activity: Activity, context: PedelecEventContext) => void): () => void {
    return this.#activityListeners.add(listener);
  }

  /**
   * The tokens used, called when the session's total changes: `usage` is the new total (what `session.usage` is now),
   * `context.turnUsage` the turn's own usage so far and `context.turnId` / `context.turnKind` / `context.seq` say which
   * turn and event it came with. A provider that reports with every token still calls it at most about once per display
   * frame (the Desktop joins its reports). Events replayed on a resume do not call it again: the resumed handle's
   * `usage` already holds their total. Providers that report no usage never call it.
   *
   * @example
   * ```ts
   * const stop = session.onUsage((usage, context) => {
   *   turnLabel.textContent = `${context.turnUsage?.outputTokens ?? 0} tokens written`;
   *   totalLabel.textContent = `${usage.totalTokens ?? 0} tokens in this session`;
   * });
   * ```
   */
  onUsage(listener: (usage: TokenUsage, context: PedelecEventContext) => void): () => void {
    return this.#usageListeners.add(listener);
  }

  /**
   * Errors that belong to no pending call: errors Core reports, a failed turn (also one another tab started, or a
   * prepare turn), a lost extension connection (`EXTENSION_DISCONNECTED`), a tool call this page could not take or
   * answer (`SUBMIT_TOOL_RESULT_FAILED`, Core's reason in `details.cause`: e.g. `TOOL_TIMEOUT` for a result that came
   * too late), an invalid message (`SDK_PROTOCOL_ERROR`).
   */
  onError(listener: (error: PedelecError, context: PedelecEventContext) => void): () => void {
    return this.#errorListeners.add(listener);
  }

  /** Called once when the session ends (also when registered after it ended). */
  onEnded(listener: (context: PedelecEventContext) => void): () => void {
    const endContext = this.#endContext;
    if (endContext === undefined) return this.#endedListeners.add(listener);
    let cancelled = false;
    queueMicrotask(() => {
      if (cancelled) return;
      try {
        listener(endContext);
      } catch (error) {
        reportCallbackError(error);
      }
    });
    return () => {
      cancelled = true;
    };
  }

  async #request<TType extends "sendText" | "cancelTurn" | "claimToolCall" | "submitToolResult" | "prepareSession">(
    type: TType,
    payload: PageRequestPayload<TType>,
    signal?: AbortSignal,
    onSend?: () => void,
  ): Promise<PageRequestResult<TType>> {
    await this.#ensureSubscribed();
    // Aborted while the port was being re-attached: the request never leaves the page.
    if (signal?.aborted) throw turnAborted(signal);
    onSend?.();
    return (await this.#bridge.request(type, payload)).result;
  }

  #startPrepare(): Promise<void> {
    if (this.#endedBy !== undefined) return Promise.reject(sessionEnded());
    if (this.#ownTurn !== undefined) return Promise.reject(sessionBusy());
    const turnId = randomId();
    let payload: PageRequestPayload<"prepareSession">;
    try {
      payload = validateRequestPayload("prepareSession", { sessionId: this.sessionId, turnId });
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#runTurn("prepare", turnId, undefined, async () => {
      const result = await this.#request("prepareSession", payload);
      return result.turnId;
    });
  }

  /**
   * Starts a turn of this handle: its promise settles on the turn's end event, a refused request, the session's end, a
   * lost link, or (for a user turn) the caller's signal. `start` sends the request (calling `markSent` as it leaves the
   * page) and resolves with Core's turn id, or null when Core started no turn.
   */
  #runTurn(
    kind: TurnKind,
    turnId: string,
    signal: AbortSignal | undefined,
    start: (markSent: () => void, turn: OwnTurn) => Promise<string | null>,
  ): Promise<void> {
    const { turn, completion } = createOwnTurn(kind, turnId);
    this.#ownTurn = turn;
    this.#noteTurn(turnId, kind);
    let sent = false;
    const started = start(() => {
      sent = true;
    }, turn);
    const onAbort = (): void => {
      if (turn.settled || signal === undefined) return;
      settleOwnTurn(turn, turnAborted(signal));
      if (!sent) {
        // Core never heard of this turn: the session is free again at once.
        if (this.#ownTurn === turn) this.#ownTurn = undefined;
        return;
      }
      // Cancel only once Core has the turn; a request that fails started nothing.
      started.then(
        () => this.#cancelAbandoned(turn),
        () => undefined,
      );
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const stopListening = (): void => signal?.removeEventListener("abort", onAbort);
    completion.then(stopListening, stopListening);
    const answered = (): void => {
      turn.awaitingAnswer = false;
    };
    started.then(answered, answered);
    started.then(
      (startedTurnId) => {
        const lost = turn.linkLostMeanwhile;
        if (lost !== undefined && this.#ownTurn === turn) {
          // Answered by the Core that then went away: nothing of this turn can arrive now.
          this.#ownTurn = undefined;
          settleOwnTurn(turn, lost);
          return;
        }
        if (startedTurnId !== null || this.#ownTurn !== turn) return;
        // Nothing to run (a prepare with nothing to prepare).
        this.#ownTurn = undefined;
        this.#contexts.forgetTurn(turnId);
        settleOwnTurn(turn);
      },
      (error: unknown) => {
        // The turn may already be settled by end() or a lost link; then this late failure changes nothing.
        if (this.#ownTurn !== turn) return;
        this.#ownTurn = undefined;
        this.#contexts.forgetTurn(turnId);
        settleOwnTurn(turn, PedelecError.from(error, kind === "prepare" ? "PREPARE_FAILED" : "SEND_TEXT_FAILED"));
      },
    );
    return completion;
  }

  /** The caller gave up on its turn: Core stops it; the handle stays busy until the turn is really over. */
  #cancelAbandoned(turn: OwnTurn): void {
    if (this.#ownTurn !== turn || this.#endedBy !== undefined) return;
    this.#request("cancelTurn", { sessionId: this.sessionId }).then(
      () => {
        // Core answers once the turn is over; its end event normally cleared the turn already.
        if (this.#ownTurn === turn) this.#ownTurn = undefined;
      },
      (error: unknown) => {
        if (this.#endedBy !== undefined) return;
        this.#errorListeners.emit(PedelecError.from(error, "SDK_TRANSPORT_ERROR"), this.#sdkContext({ turnId: turn.turnId }));
      },
    );
  }

  /** After the port or the link to Core was lost, the next call first re-attaches, getting missed events replayed. */
  async #ensureSubscribed(): Promise<void> {
    if (!this.#needsReattach && this.#generation !== undefined && this.#generation === this.#bridge.liveGeneration) return;
    this.#resubscribing ??= this.#resubscribe().finally(() => {
      this.#resubscribing = undefined;
    });
    await this.#resubscribing;
  }

  async #resubscribe(): Promise<void> {
    const held: SessionEventEnvelope[] = [];
    this.#held = held;
    try {
      await this.#reattach();
    } finally {
      if (this.#held === held) this.#held = undefined;
      for (const envelope of held) this.#handleEnvelope(envelope);
    }
  }

  async #reattach(): Promise<void> {
    let answer: BridgeAnswer<PageRequestResult<"resumeSession">>;
    try {
      answer = await this.#bridge.request("resumeSession", { sessionId: this.sessionId, afterSeq: this.#lastSeq });
    } catch (error) {
      const failure = PedelecError.from(error, "SDK_TRANSPORT_ERROR");
      if (failure.code !== "THREAD_NOT_FOUND") throw failure;
      this.#finish("core", this.#sdkContext());
      throw sessionEnded(failure);
    }
    if (this.#endedBy !== undefined) throw sessionEnded();
    const info = answer.result;
    this.#generation = answer.generation;
    this.#needsReattach = false;
    this.#lastSeq = Math.min(this.#lastSeq, info.lastSeq);
    this.#replayThrough = info.lastSeq;
    this.#pendingAtAttach = new Set(info.pendingToolCalls.map((call) => call.toolRequestId));
    if (info.activeTurn !== null) this.#noteTurn(info.activeTurn.turnId, info.activeTurn.turnKind);
    if (info.status === "ended") {
      this.#finish("core", this.#coreContext());
      throw sessionEnded();
    }
    this.#applyToMirror({ type: "info-received", status: info.status, activeTurn: info.activeTurn }, this.#coreContext());
    // What the handle missed while it was away (its replay does not call onUsage again).
    this.#setUsage(info.usage, this.#coreContext());
    this.#dispatchPending(info.pendingToolCalls);
  }

  async #claimToolCall(toolRequestId: string): Promise<boolean> {
    const result = await this.#request("claimToolCall", { sessionId: this.sessionId, toolRequestId });
    return result.claimed;
  }

  async #submitToolResult(toolRequestId: string, outcome: ToolResultOutcome): Promise<void> {
    await this.#request("submitToolResult", { sessionId: this.sessionId, toolRequestId, outcome });
  }

  #dispatchPending(calls: readonly PendingToolCall[]): void {
    for (const call of calls) {
      this.#tools.dispatch(call, this.#coreContext({ turnId: call.turnId, toolRequestId: call.toolRequestId }));
    }
  }

  #releaseDeferred(pending: readonly PendingToolCall[]): void {
    const deferred = this.#deferred;
    this.#deferred = undefined;
    this.#deferredTimer = undefined;
    if (deferred === undefined || this.#endedBy !== undefined) return;
    this.#dispatchPending(pending);
    for (const envelope of deferred) this.#handleEnvelope(envelope);
  }

  #handleEnvelope(envelope: SessionEventEnvelope): void {
    if (envelope.sessionId !== this.sessionId || this.#endedBy !== undefined) return;
    const waiting = this.#deferred ?? this.#held;
    if (waiting !== undefined) {
      waiting.push(envelope);
      return;
    }
    // Replays and duplicates (several routes, a re-attach) carry a seq already seen.
    if (envelope.seq <= this.#lastSeq) return;
    this.#lastSeq = envelope.seq;
    const replayed = envelope.seq <= this.#replayThrough;
    const event = envelope.event;
    const context = (extras: ContextExtras = {}) => this.#coreContext(extras, envelope);
    switch (event.type) {
      case "status-changed":
        // Through the mirror: the answer holds where replayed changes lead, and the table checks live ones.
        this.#applyToMirror({ type: "event-received", event, replayed }, context({ turnId: event.turnId }));
        return;
      case "turn-started":
        this.#noteTurn(event.turnId, event.turnKind);
        this.#applyToMirror({ type: "event-received", event, replayed }, context({ turnId: event.turnId }));
        return;
      case "chat-delta":
        // A prepare turn's chat output is hidden from the app by design.
        if (this.#contexts.turnKind(event.turnId) === "prepare") return;
        this.#chatDeltaListeners.emit(event.delta, context({ turnId: event.turnId, messageId: event.messageId }));
        return;
      case "chat-completed":
        if (this.#contexts.turnKind(event.turnId) === "prepare") return;
        this.#chatListeners.emit({ messageId: event.messageId, text: event.text }, context({ turnId: event.turnId, messageId: event.messageId }));
        return;
      case "activity-updated":
        this.#activityListeners.emit(event.activity, context({ turnId: event.turnId }));
        return;
      case "artifact-created":
        // Replayed only to a page that asked for the events after its afterSeq; listAssets() shows them all.
        this.#artifactListeners.emit(event.artifact, context({ turnId: event.turnId }));
        return;
      case "usage-updated":
        // The total in the answer is where the replayed updates lead; replaying them would only count up again.
        if (replayed) return;
        this.#setUsage(event.sessionUsage, context({ turnId: event.turnId, turnUsage: event.usage }));
        return;
      case "tool-call-requested": {
        // A replayed request is history unless the call still waited when Core answered.
        if (replayed && !this.#pendingAtAttach.has(event.toolRequestId)) return;
        const { type: _type, ...call } = event;
        this.#tools.dispatch(call, context({ turnId: event.turnId, toolRequestId: event.toolRequestId }));
        return;
      }
      case "tool-call-settled":
        this.#tools.settle(event.toolRequestId, event.outcome);
        return;
      case "turn-completed":
        this.#noteTurn(event.turnId, event.turnKind);
        this.#applyToMirror({ type: "event-received", event, replayed }, context({ turnId: event.turnId }));
        this.#settleTurn(event.turnId, undefined, context({ turnId: event.turnId }));
        return;
      case "turn-failed":
        this.#noteTurn(event.turnId, event.turnKind);
        this.#applyToMirror({ type: "event-received", event, replayed }, context({ turnId: event.turnId }));
        this.#settleTurn(event.turnId, PedelecError.fromWire(event.error), context({ turnId: event.turnId }));
        return;
      case "error-reported":
        this.#errorListeners.emit(PedelecError.fromWire(event.error), context({ turnId: event.turnId }));
        return;
      case "session-ended":
        // The handle winds down first; its end then moves the mirror (session-left) and reports `ended`.
        this.#finish("core", context({ endReason: event.reason }));
        return;
    }
  }

  #settleTurn(turnId: string, error: PedelecError | undefined, context: PedelecEventContext): void {
    this.#tools.abortTurn(turnId, error ?? new PedelecError("TURN_CANCELLED", "The turn is over"));
    // A failure is an error event for every listener, whether or not a call here awaits it; an intended stop
    // (cancel, end) is not.
    const reportedAlready = this.#interruptedTurns.delete(turnId);
    if (error !== undefined && !INTENDED_STOPS.has(error.code) && !reportedAlready) this.#errorListeners.emit(error, context);
    const turn = this.#ownTurn;
    if (turn?.turnId !== turnId) return;
    this.#ownTurn = undefined;
    settleOwnTurn(turn, error);
  }

  #handleDisconnect(generation: number, error: PedelecError): void {
    if (generation !== this.#generation || this.#endedBy !== undefined) return;
    this.#generation = undefined;
    this.#interrupt(error);
    this.#reattachSoon(0);
  }

  /**
   * Re-attaches without waiting for the app's next call: a page that only waits (for the agent's next tool call, say)
   * would otherwise hear nothing after its port died, as when the extension's service worker restarts. A few tries,
   * spaced out; after that, the next call re-attaches (and reports what is wrong).
   */
  #reattachSoon(attempt: number): void {
    const delay = EAGER_REATTACH_DELAYS_MS[attempt];
    if (delay === undefined) return;
    clearTimeout(this.#reattachTimer);
    this.#reattachTimer = setTimeout(() => {
      if (this.#endedBy !== undefined || this.#generation !== undefined) return;
      this.#ensureSubscribed().catch(() => this.#reattachSoon(attempt + 1));
    }, delay);
  }

  /**
   * The answer to an active turn can no longer arrive: fail it, stop tool handlers, and say why. Core cannot report a
   * status over a broken link, so the SDK shows `error` itself; the re-attach brings Core's status back.
   */
  #interrupt(error: PedelecError): void {
    const turn = this.#ownTurn;
    const context = this.#sdkContext({ turnId: turn?.turnId });
    // One failed turn is one error event: this one, not also the turn-failed a restarted Core replays for it.
    for (const turnId of this.#contexts.turnIds()) this.#interruptedTurns.add(turnId);
    if (turn !== undefined) this.#interruptedTurns.add(turn.turnId);
    for (const stale of this.#interruptedTurns) {
      // Turns Core never reports again (the session was lost with it) would otherwise be kept forever.
      if (this.#interruptedTurns.size <= 64) break;
      this.#interruptedTurns.delete(stale);
    }
    this.#tools.abortAll(error, "release");
    // A user turn whose sendText is still unanswered is not over yet: should the request fail with the link, it goes
    // again once re-attached (see sendText).
    if (turn !== undefined && turn.kind === "user" && turn.awaitingAnswer) {
      if (!turn.sentAgain) turn.linkLostMeanwhile = error;
    } else if (turn !== undefined) {
      this.#ownTurn = undefined;
      settleOwnTurn(turn, error);
    }
    // A busy status (isBusySessionStatus) leaves an answer that cannot arrive now.
    this.#applyToMirror({ type: "link-lost", ownTurnUnderWay: turn !== undefined }, context);
    this.#errorListeners.emit(error, context);
  }

  #finish(endedBy: "core" | "sdk", context: PedelecEventContext): void {
    if (this.#endedBy !== undefined) return;
    this.#endedBy = endedBy;
    this.#endContext = context;
    clearTimeout(this.#deferredTimer);
    clearTimeout(this.#reattachTimer);
    this.#deferred = undefined;
    for (const unsubscribe of this.#unsubscribeBridge) unsubscribe();
    const error = sessionEnded();
    this.#tools.abortAll(error, "finish");
    this.#runs.failAll(error);
    this.#assets.failAll(error);
    const turn = this.#ownTurn;
    this.#ownTurn = undefined;
    if (turn !== undefined) settleOwnTurn(turn, error);
    this.#applyToMirror({ type: "session-left" }, context);
    this.#endedListeners.emit(context);
    this.#endedListeners.clear();
  }

  /**
   * Moves the mirror (protocol's stepSessionMirror) and reports a changed status. A change the transition table lacks
   * (`irregular`: events missed, or the SDK's own `error` after a lost link) is Core's status all the same: it is shown.
   */
  #applyToMirror(input: SessionMirrorInput, context: PedelecEventContext): void {
    const before = this.#mirror.status;
    this.#mirror = stepSessionMirror(this.#mirror, input).state;
    if (this.#mirror.status !== before) this.#statusListeners.emit(this.#mirror.status, context);
  }

  #setUsage(reported: TokenUsage | undefined, context: PedelecEventContext): void {
    const usage = raisedUsage(this.#usage, reported);
    if (usage === this.#usage) return;
    this.#usage = usage;
    this.#usageListeners.emit(usage, context);
  }

  #noteTurn(turnId: string, kind: TurnKind): void {
    this.#contexts.noteTurn(turnId, kind);
  }

  #coreContext(extras: ContextExtras = {}, envelope?: SessionEventEnvelope): PedelecEventContext {
    return this.#contexts.core(extras, envelope);
  }

  #sdkContext(extras: ContextExtras = {}): PedelecEventContext {
    return this.#contexts.sdk(extras);
  }
}

/**
 * `current` raised to `reported` field by field (the total never goes down, whatever order reports arrive in), as a new
 * frozen object; `current` itself when nothing rose.
 */
function raisedUsage(current: TokenUsage, reported: TokenUsage | undefined): TokenUsage {
  if (reported === undefined) return current;
  const raised = highestUsage(current, reported);
  const rose = TOKEN_USAGE_FIELDS.some((field) => raised[field] !== current[field]);
  return rose ? Object.freeze(raised) : current;
}

function sessionEnded(cause?: PedelecError): PedelecError {
  return new PedelecError("SESSION_ENDED", "The session has ended", cause === undefined ? undefined : { cause: cause.toWire() });
}

function sessionBusy(): PedelecError {
  return new PedelecError("SESSION_BUSY", "The session already has an active turn");
}

function turnAborted(signal: AbortSignal): PedelecError {
  return abortError(signal, () => new PedelecError("TURN_CANCELLED", "The turn was cancelled"));
}
