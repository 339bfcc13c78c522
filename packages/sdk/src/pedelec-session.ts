import type { EffortLevel, ProviderCode, SessionStatus, TurnKind } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionInfo, ToolResultOutcome } from "@pedelec/protocol/requests";
import type { Activity, SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { Bridge } from "./bridge.js";
import { ListenerSet, reportCallbackError } from "./listener-set.js";
import { randomId } from "./random-id.js";
import { validateRequestPayload } from "./request-validation.js";
import { ToolDispatcher } from "./tool-dispatch.js";
import { WorkspaceRuns } from "./workspace-runs.js";
import { SessionAssets } from "./session-assets.js";
import type { UploadBody } from "./asset-upload-body.js";
import type {
  AssetEntry,
  AssetReadKind,
  AssetReadOptions,
  AssetUploadOptions,
  ChatMessage,
  JsonValue,
  PedelecEventContext,
  PedelecRunOptions,
  PedelecWorkspace,
  ToolHandler,
} from "./types.js";

/** What `Pedelec` hands a new session handle. Not part of the public API. */
export interface SessionInit {
  readonly info: SessionInfo;
  /** The bridge connection that carried the create/resume answer, i.e. the one subscribed to the events. */
  readonly generation: number;
  readonly bridge: Bridge;
  readonly inlineHandlers: ReadonlyMap<string, ToolHandler>;
  /** Sends asset upload bodies (default: XMLHttpRequest in a page). */
  readonly uploadBody?: UploadBody;
}

interface ActiveTurn {
  readonly turnId: string;
  readonly resolve: () => void;
  readonly reject: (error: PedelecError) => void;
}

type ContextExtras = Pick<PedelecEventContext, "turnId" | "toolRequestId" | "messageId">;

// Core may settle these itself with a status event; the SDK only fills in when it has not.
const BUSY_STATUSES: ReadonlySet<SessionStatus> = new Set(["running", "waiting_tool_result"]);
/** Ways a turn stops on purpose; they end the turn's promise but are not error events. */
const INTENDED_STOPS: ReadonlySet<string> = new Set(["TURN_CANCELLED", "SESSION_ENDED"]);

/** The status a turn leaves behind, matching Core's: failures leave `error`, a cancel leaves `idle`. */
function statusAfterTurn(error: PedelecError | undefined): SessionStatus {
  return error === undefined || INTENDED_STOPS.has(error.code) ? "idle" : "error";
}

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
export class PedelecSession<TToolName extends string = string> {
  /** Core's id of the session (also its thread id). */
  readonly sessionId: string;
  /** The agent backend the session runs on. */
  readonly provider: ProviderCode;
  /** The effort profile snapshotted at creation. */
  readonly effortLevel: EffortLevel;
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
  #resubscribing: Promise<void> | undefined;
  #status: SessionStatus;
  #lastSeq: number;
  #activeTurn: ActiveTurn | undefined;
  readonly #turnKinds = new Map<string, TurnKind>();
  #endedBy: "core" | "sdk" | undefined;
  #endContext: PedelecEventContext | undefined;
  #endRequest: Promise<void> | undefined;

  readonly #chatDeltaListeners = new ListenerSet<[string, PedelecEventContext]>();
  readonly #chatListeners = new ListenerSet<[ChatMessage, PedelecEventContext]>();
  readonly #statusListeners = new ListenerSet<[SessionStatus, PedelecEventContext]>();
  readonly #activityListeners = new ListenerSet<[Activity, PedelecEventContext]>();
  readonly #errorListeners = new ListenerSet<[PedelecError, PedelecEventContext]>();
  readonly #endedListeners = new ListenerSet<[PedelecEventContext]>();

  /** @internal Sessions come from `pedelec.createSession()` and `pedelec.resumeSession()`. */
  constructor(init: SessionInit) {
    const { info } = init;
    this.sessionId = info.sessionId;
    this.provider = info.provider;
    this.effortLevel = info.effortLevel;
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
    });
    this.#generation = init.generation;
    this.#status = info.status;
    this.#lastSeq = info.lastSeq;
    this.#tools = new ToolDispatcher({
      sessionId: info.sessionId,
      inlineHandlers: init.inlineHandlers,
      submit: (toolRequestId, outcome) => this.#submitToolResult(toolRequestId, outcome),
      reportSubmitFailure: (error, call) =>
        this.#errorListeners.emit(error, this.#sdkContext({ turnId: call.turnId, toolRequestId: call.toolRequestId })),
    });
    this.#unsubscribeBridge = [
      init.bridge.onEvent((envelope) => this.#handleEnvelope(envelope)),
      init.bridge.onDisconnect((generation, error) => this.#handleDisconnect(generation, error)),
      init.bridge.onInterruption((sessionId, error) => {
        if (sessionId === this.sessionId && this.#endedBy === undefined) this.#interrupt(error);
      }),
      init.bridge.onProtocolError((error, sessionId) => {
        if (sessionId === undefined || sessionId === this.sessionId) this.#errorListeners.emit(error, this.#sdkContext());
      }),
    ];
    if (info.status === "ended") this.#finish("core", this.#sdkContext());
  }

  /** The session's current status: `idle | running | waiting_tool_result | ended | error`. */
  getStatus(): SessionStatus {
    return this.#status;
  }

  /**
   * Sends a user message and resolves when the agent's turn completes. Rejects with the turn's error code when
   * it fails, `SESSION_BUSY` while another turn of this session is active, `SESSION_ENDED` once it ended.
   *
   * @example
   * ```ts
   * try { await session.sendText("Add milk to the list."); }
   * catch (error) { if (error instanceof PedelecError && error.code === "SESSION_BUSY") showBusy(); }
   * ```
   */
  sendText(text: string): Promise<void> {
    if (this.#endedBy !== undefined) return Promise.reject(sessionEnded());
    if (this.#activeTurn !== undefined) {
      return Promise.reject(new PedelecError("SESSION_BUSY", "The session already has an active turn"));
    }
    const turnId = randomId();
    let payload: unknown;
    try {
      payload = validateRequestPayload("sendText", { sessionId: this.sessionId, turnId, text });
    } catch (error) {
      return Promise.reject(error);
    }
    const completion = new Promise<void>((resolve, reject) => {
      this.#activeTurn = { turnId, resolve, reject };
    });
    this.#turnKinds.set(turnId, "user");
    const previousStatus = this.#status;
    this.#setStatus("running", this.#sdkContext({ turnId }));
    this.#request("sendText", payload).catch((error: unknown) => {
      const turn = this.#activeTurn;
      // The turn may already be settled by its events or by end(); then this late failure changes nothing.
      if (turn?.turnId !== turnId) return;
      this.#activeTurn = undefined;
      this.#turnKinds.delete(turnId);
      if (this.#status === "running") this.#setStatus(previousStatus, this.#sdkContext({ turnId }));
      turn.reject(PedelecError.from(error, "SEND_TEXT_FAILED"));
    });
    return completion;
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
   * Ends the session. Idempotent. A pending `sendText()` rejects with `SESSION_ENDED` at once, running tool
   * handlers are aborted, and `onEnded` fires.
   */
  end(): Promise<void> {
    if (this.#endRequest !== undefined) return this.#endRequest;
    if (this.#endedBy === "core") return Promise.resolve();
    this.#finish("sdk", this.#sdkContext());
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

  /** The session status, called only when it changes. */
  onStatus(listener: (status: SessionStatus, context: PedelecEventContext) => void): () => void {
    return this.#statusListeners.add(listener);
  }

  /**
   * Registers a tool handler: for one tool name, or (without a name) the generic fallback for tools that
   * have neither a named nor an inline handler. The newest registration wins.
   *
   * @example
   * ```ts
   * session.onTool("add_todo", (args, context) => addTodo(args, context.signal));
   * session.onTool((args, context) => ({ error: `unexpected tool ${context.toolName}` }));
   * ```
   */
  onTool(handler: ToolHandler): () => void;
  onTool<TName extends TToolName>(name: TName, handler: ToolHandler<TName>): () => void;
  onTool(nameOrHandler: string | ToolHandler, handler?: ToolHandler): () => void {
    if (typeof nameOrHandler === "function") return this.#tools.register(undefined, nameOrHandler);
    if (typeof nameOrHandler !== "string" || typeof handler !== "function") {
      throw new PedelecError("INVALID_INPUT", "onTool takes a handler, or a tool name and a handler");
    }
    return this.#tools.register(nameOrHandler, handler);
  }

  /** Normalized provider activity: a command run, a file edited, a web search… */
  onActivity(listener: (activity: Activity, context: PedelecEventContext) => void): () => void {
    return this.#activityListeners.add(listener);
  }

  /**
   * Errors that belong to no pending call: errors Core reports, a failed turn nobody awaits here, a lost
   * extension connection (`EXTENSION_DISCONNECTED`), an undeliverable tool result (`SUBMIT_TOOL_RESULT_FAILED`),
   * an invalid message (`SDK_PROTOCOL_ERROR`).
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

  async #request(type: "sendText" | "cancelTurn" | "submitToolResult", payload: unknown): Promise<unknown> {
    await this.#ensureSubscribed();
    return (await this.#bridge.request(type, payload)).result;
  }

  /** After the port was lost, the next call first subscribes the new port to this session's events. */
  async #ensureSubscribed(): Promise<void> {
    if (this.#generation !== undefined && this.#generation === this.#bridge.liveGeneration) return;
    this.#resubscribing ??= this.#resubscribe().finally(() => {
      this.#resubscribing = undefined;
    });
    await this.#resubscribing;
  }

  async #resubscribe(): Promise<void> {
    let answer;
    try {
      answer = await this.#bridge.request("resumeSession", { sessionId: this.sessionId });
    } catch (error) {
      const failure = PedelecError.from(error, "SDK_TRANSPORT_ERROR");
      if (failure.code !== "THREAD_NOT_FOUND") throw failure;
      this.#finish("core", this.#sdkContext());
      throw sessionEnded(failure);
    }
    const info = answer.result as SessionInfo;
    this.#generation = answer.generation;
    // Events missed while disconnected are gone; everything still to come is newer than info.lastSeq.
    this.#lastSeq = Math.max(this.#lastSeq, info.lastSeq);
    if (info.status === "ended") {
      this.#finish("core", this.#sdkContext());
      throw sessionEnded();
    }
    this.#setStatus(info.status, this.#sdkContext());
  }

  async #submitToolResult(toolRequestId: string, outcome: ToolResultOutcome): Promise<void> {
    await this.#request("submitToolResult", { sessionId: this.sessionId, toolRequestId, outcome });
  }

  #handleEnvelope(envelope: SessionEventEnvelope): void {
    if (envelope.sessionId !== this.sessionId || this.#endedBy !== undefined) return;
    // Replays and duplicates (several routes, a resubscribe) carry a seq already seen.
    if (envelope.seq <= this.#lastSeq) return;
    this.#lastSeq = envelope.seq;
    const event = envelope.event;
    const context = (extras: ContextExtras = {}) => this.#coreContext(envelope, extras);
    switch (event.type) {
      case "status-changed":
        if (event.status === "ended") this.#finish("core", context({ turnId: event.turnId }));
        else this.#setStatus(event.status, context({ turnId: event.turnId }));
        return;
      case "turn-started":
        this.#turnKinds.set(event.turnId, event.turnKind);
        return;
      case "chat-delta":
        // A prepare turn's chat output is hidden from the app by design.
        if (this.#turnKinds.get(event.turnId) === "prepare") return;
        this.#chatDeltaListeners.emit(event.delta, context({ turnId: event.turnId, messageId: event.messageId }));
        return;
      case "chat-completed":
        if (this.#turnKinds.get(event.turnId) === "prepare") return;
        this.#chatListeners.emit(
          { messageId: event.messageId, text: event.text },
          context({ turnId: event.turnId, messageId: event.messageId }),
        );
        return;
      case "activity-updated":
        this.#activityListeners.emit(event.activity, context({ turnId: event.turnId }));
        return;
      case "tool-call-requested":
        this.#setStatus(
          "waiting_tool_result",
          this.#sdkContext({ turnId: event.turnId, toolRequestId: event.toolRequestId }),
        );
        this.#tools.dispatch(event);
        return;
      case "tool-call-settled":
        this.#tools.settle(event.toolRequestId, event.outcome);
        if (this.#status === "waiting_tool_result" && this.#tools.activeCount === 0) {
          this.#setStatus("running", this.#sdkContext({ turnId: event.turnId, toolRequestId: event.toolRequestId }));
        }
        return;
      case "turn-completed":
        this.#turnKinds.set(event.turnId, event.turnKind);
        this.#settleTurn(event.turnId, undefined, context({ turnId: event.turnId }));
        return;
      case "turn-failed":
        this.#turnKinds.set(event.turnId, event.turnKind);
        this.#settleTurn(event.turnId, PedelecError.fromWire(event.error), context({ turnId: event.turnId }));
        return;
      case "error-reported":
        this.#errorListeners.emit(PedelecError.fromWire(event.error), context({ turnId: event.turnId }));
        return;
      case "session-ended":
        this.#finish("core", context());
        return;
    }
  }

  #settleTurn(turnId: string, error: PedelecError | undefined, context: PedelecEventContext): void {
    this.#tools.abortTurn(turnId, error ?? new PedelecError("TURN_CANCELLED", "The turn is over"));
    if (BUSY_STATUSES.has(this.#status)) this.#setStatus(statusAfterTurn(error), this.#sdkContext({ turnId }));
    this.#turnKinds.delete(turnId);
    // A failure is an error event for every listener, whether or not a sendText() here awaits it; an intended
    // stop (cancel, end) is not.
    if (error !== undefined && !INTENDED_STOPS.has(error.code)) this.#errorListeners.emit(error, context);
    const turn = this.#activeTurn;
    if (turn?.turnId === turnId) {
      this.#activeTurn = undefined;
      if (error === undefined) turn.resolve();
      else turn.reject(error);
      return;
    }
  }

  #handleDisconnect(generation: number, error: PedelecError): void {
    if (generation !== this.#generation || this.#endedBy !== undefined) return;
    this.#generation = undefined;
    this.#interrupt(error);
  }

  /** The answer to an active turn can no longer arrive: fail it, stop tool handlers, and say why. */
  #interrupt(error: PedelecError): void {
    const turn = this.#activeTurn;
    const context = this.#sdkContext({ turnId: turn?.turnId });
    this.#tools.abortAll(error);
    if (turn !== undefined) {
      this.#activeTurn = undefined;
      this.#turnKinds.delete(turn.turnId);
      turn.reject(error);
    }
    if (BUSY_STATUSES.has(this.#status)) this.#setStatus("error", context);
    this.#errorListeners.emit(error, context);
  }

  #finish(endedBy: "core" | "sdk", context: PedelecEventContext): void {
    if (this.#endedBy !== undefined) return;
    this.#endedBy = endedBy;
    this.#endContext = context;
    for (const unsubscribe of this.#unsubscribeBridge) unsubscribe();
    const error = sessionEnded();
    this.#tools.abortAll(error);
    this.#runs.failAll(error);
    this.#assets.failAll(error);
    const turn = this.#activeTurn;
    this.#activeTurn = undefined;
    turn?.reject(error);
    this.#setStatus("ended", context);
    this.#endedListeners.emit(context);
    this.#endedListeners.clear();
  }

  #setStatus(status: SessionStatus, context: PedelecEventContext): void {
    if (status === this.#status) return;
    this.#status = status;
    this.#statusListeners.emit(status, context);
  }

  #coreContext(envelope: SessionEventEnvelope, extras: ContextExtras): PedelecEventContext {
    return this.#withExtras(
      { sessionId: this.sessionId, provider: this.provider, source: "core", eventEmittedAt: envelope.emittedAt, seq: envelope.seq },
      extras,
    );
  }

  #sdkContext(extras: ContextExtras = {}): PedelecEventContext {
    return this.#withExtras(
      { sessionId: this.sessionId, provider: this.provider, source: "sdk", eventEmittedAt: new Date().toISOString() },
      extras,
    );
  }

  #withExtras(base: PedelecEventContext, extras: ContextExtras): PedelecEventContext {
    const context = { ...base };
    if (extras.turnId !== undefined) {
      context.turnId = extras.turnId;
      const turnKind = this.#turnKinds.get(extras.turnId);
      if (turnKind !== undefined) context.turnKind = turnKind;
    }
    if (extras.toolRequestId !== undefined) context.toolRequestId = extras.toolRequestId;
    if (extras.messageId !== undefined) context.messageId = extras.messageId;
    return context;
  }
}

function sessionEnded(cause?: PedelecError): PedelecError {
  return new PedelecError("SESSION_ENDED", "The session has ended", cause === undefined ? undefined : { cause: cause.toWire() });
}
