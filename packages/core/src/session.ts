import { randomUUID } from "node:crypto";
import { delimiter, join } from "node:path";
import type { EffortLevel, ExplicitEffort, JsonValue, ProviderCode, SessionStatus, TurnKind, AccessMode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { SessionDriver } from "@pedelec/protocol/session-driver";
import { noTurnRunningError, sessionEndedError, sessionMachineState, type PublishedSessionEvent } from "@pedelec/protocol/session-machine";
import {
  reduceSessionUsage,
  sessionUsageState,
  sessionUsageTotal,
  type SessionUsageInput,
  type SessionUsageState,
} from "@pedelec/protocol/session-usage";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
import { THREAD_CAPABILITY_ENV, type SessionInfo, type ToolResultOutcome } from "@pedelec/protocol/requests";
import { SESSION_TOOL_SERVER_COMMAND } from "@pedelec/protocol/session-tool-server";
import type { PendingToolCall, SessionEndReason, SessionEvent, SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { eventFrameProblem } from "./event-frame-check.js";
import { buildFirstPrompt } from "./first-prompt.js";
import { log } from "./logger.js";
import { artifactsSince, assetSnapshot, type AssetSnapshot } from "./assets/turn-artifacts.js";
import { ModelResponseWatch } from "./model-response-watch.js";
import type { ProcessGroupLedger } from "./process-group-ledger.js";
import type { ProviderAdapter, ProviderEvent, ProviderTurnOutcome } from "./providers/provider-adapter.js";
import type { ToolRegistry } from "./tool-registry.js";
import type { ThreadCapability } from "./thread-capability.js";
import type { PreparedWorkspace } from "./workspace.js";
import type { ScriptRunner } from "@pedelec/script-runtime/script-runner";
import { SessionScripts } from "./session-scripts.js";

/** How one page tool call's wait ended: answered with a result, or stopped with the error the agent gets. */
type ToolCallSettlement =
  | { outcome: "answered"; result: ToolResultOutcome }
  | { outcome: "timed-out" | "cancelled" | "abandoned"; error: PedelecError };

/**
 * How long text deltas that follow a sent one are joined: one display frame, so a fast stream reaches the page in a
 * few events (each a native message and a port message) while a person sees no delay, and a slow one goes out token
 * by token.
 */
export const CHAT_DELTA_WINDOW_MS = 16;

/** How long usage updates that follow a sent one are joined: one display frame, as for text deltas. */
export const USAGE_UPDATE_WINDOW_MS = CHAT_DELTA_WINDOW_MS;

export interface SessionSetup {
  id: string;
  origin: string;
  provider: ProviderCode;
  adapter: ProviderAdapter;
  executablePath: string;
  /** The effort profile the session runs with; null when the page named an explicit `effort`. */
  effortLevel: EffortLevel | null;
  /** The explicit effort the page named with its model; null for a session on an effort profile. */
  effort: ExplicitEffort | null;
  /** The profile's or the explicit effort's argv, snapshotted at creation; later edits to settings do not reach it. */
  effortArgv: readonly string[];
  model: string | null;
  guidance: string;
  tools: ToolRegistry;
  workspace: PreparedWorkspace;
  access: AccessMode;
  autoEndOnDisconnect: boolean;
  /** The secret the session's agent presents on pedelec-cli calls; it reaches only the provider's environment. */
  capability: ThreadCapability;
  /** Folder holding the pedelec-cli launcher, put first on the provider's PATH. */
  binDir: string;
  /**
   * The user's login-shell PATH, after Core's own: a CLI started by a browser-launched Core still finds `node`. Awaited
   * when a turn starts, not when the session is created, since the shell can take a second to answer.
   */
  loginShellPath: () => Promise<readonly string[]>;
  home: string;
  baseEnv: NodeJS.ProcessEnv;
  providerIdleTimeoutMs: number;
  /** How long a turn may go without the model's progress outside commands and tool calls (ModelResponseWatch). */
  modelResponseTimeoutMs: number;
  unfollowedTurnGraceMs: number;
  /** Where provider processes are recorded while they run, so a later Core can reap them if this one is killed. */
  processLedger: ProcessGroupLedger;
  /** Core's script runner, created on first use. */
  scriptRunner: () => Promise<ScriptRunner>;
  /** The free bytes a script run must leave on the workspace's disk, from the settings in force when it starts. */
  minFreeDiskBytes: () => Promise<number>;
  /** The provider's own options (ProviderAdapter.sessionOptions), snapshotted like the effort profile; opaque here. */
  providerOptions?: unknown;
  /** Every event, in seq order; the caller stores it before it leaves Core. */
  publish: (envelope: SessionEventEnvelope) => void;
  /** The provider started (or restarted) the conversation later turns continue. */
  onProviderSessionId?: (providerSessionId: string | null) => void;
  /** What a session rebuilt from Core's store already had before this Core started. */
  restored?: RestoredSessionState;
}

export interface RestoredSessionState {
  createdAt: string;
  lastSeq: number;
  status: SessionStatus;
  providerSessionId: string | null;
  /** Whether the earlier Core started a turn with this id (its turn-started event is in the store). */
  startedTurn: (turnId: string) => boolean;
  /** The tokens the session used before this Core started: the `sessionUsage` of its last stored usage update. */
  usage?: TokenUsage;
}

/** The user text of a prepare turn; the first prompt around it carries the guidance and the tool index. */
const PREPARE_TEXT =
  "This first message only prepares the session. Reply with one short sentence saying you are ready; do not run commands or call tools yet.";

interface ActiveTurn {
  turnId: string;
  kind: TurnKind;
  text: string;
  controller: AbortController;
  done: Promise<void>;
  /** Set while the provider runs. */
  responseWatch?: ModelResponseWatch;
}

/**
 * One agent session: the I/O shell around the session machine (`@pedelec/protocol/session-machine`), which owns the
 * status, the event sequence, the active turn and the tool calls of that turn. This class runs the provider, the
 * timers, the waits of the agent's tool calls and the joining of deltas. Core's socket layer only translates requests
 * into calls on this class.
 */
export class Session {
  readonly createdAt: string;
  /** The session machine, and the joining of deltas and usage updates around it. */
  readonly #driver: SessionDriver<SessionEventEnvelope>;
  #providerSessionId: string | null;
  /** The running turn's processes and waits; the machine knows it by its id. */
  #activeTurn: ActiveTurn | null = null;
  readonly #endController = new AbortController();
  /** How to wake each agent's tool call waiting for a page, by toolRequestId. */
  readonly #toolWaits = new Map<string, (settlement: ToolCallSettlement) => void>();
  #idleTimer: NodeJS.Timeout | undefined;
  /** The turn the idle timer watches, and when its provider last said anything (performance.now()). */
  #idleTurn: ActiveTurn | undefined;
  #lastOutputAt = 0;
  #unfollowedTimer: NodeJS.Timeout | undefined;
  /** The tokens used: the turn's, replaced by each report, and the session's total (session-usage.ts). */
  #usage: SessionUsageState;

  /** Scripts run by the page (`workspace.run()`) and by the agent (`pedelec-ts-runtime`). */
  readonly scripts: SessionScripts;

  constructor(readonly setup: SessionSetup) {
    const { restored } = setup;
    this.createdAt = restored?.createdAt ?? new Date().toISOString();
    this.#driver = new SessionDriver({
      state: sessionMachineState({
        sessionId: setup.id,
        status: restored?.status ?? "idle",
        seq: restored?.lastSeq ?? 0,
        // A session with events had a turn here or before a Core restart: there is nothing left to prepare.
        hadTurn: restored !== undefined && restored.lastSeq > 0,
      }),
      // Deltas and usage updates that follow a sent one within one display frame are joined.
      later: (callback) => setTimeout(callback, CHAT_DELTA_WINDOW_MS),
      seal: (seq, event) => this.#envelope(seq, event),
      send: (envelope) => setup.publish(envelope),
    });
    this.#providerSessionId = restored?.providerSessionId ?? null;
    this.#usage = sessionUsageState(restored?.usage);
    this.scripts = new SessionScripts({
      threadId: setup.id,
      workspaceRoot: setup.workspace.path,
      runner: setup.scriptRunner,
      minFreeDiskBytes: setup.minFreeDiskBytes,
    });
  }

  get id(): string {
    return this.setup.id;
  }
  get origin(): string {
    return this.setup.origin;
  }
  get status(): SessionStatus {
    return this.#driver.state.status;
  }
  get ended(): boolean {
    return this.#driver.state.ended;
  }
  /** Aborts (with SESSION_ENDED) the moment the session ends, so work bound to it, such as asset transfers, stops. */
  get endedSignal(): AbortSignal {
    return this.#endController.signal;
  }

  info(): SessionInfo {
    const { setup } = this;
    return {
      sessionId: setup.id,
      provider: setup.provider,
      effortLevel: setup.effortLevel,
      effort: setup.effort,
      model: setup.model,
      sessionCreatedAt: this.createdAt,
      workspace: { path: setup.workspace.path, managed: setup.workspace.managed },
      access: setup.access,
      autoEndOnDisconnect: setup.autoEndOnDisconnect,
      toolNames: setup.tools.names,
      ...this.#driver.infoFields(),
      usage: sessionUsageTotal(this.#usage),
    };
  }

  /**
   * Accepts a turn and starts it after the caller has answered the request (so the reply precedes its events). A turn
   * id this session already started (running, over, or interrupted by a Core that stopped) starts nothing: a page
   * whose link broke with the request in flight cannot know whether it arrived, and sends it again under the same id.
   */
  startTurn(turnId: string, text: string, kind: TurnKind = "user"): void {
    if (this.#driver.apply({ type: "turn-requested", turnId, turnKind: kind, startedEarlier: this.#startedEarlier }) !== "accepted") return;
    this.#startSoon(turnId, text, kind);
  }

  /**
   * Starts a hidden "prepare" turn that gives the provider the first prompt (guidance and tool index), so the first real
   * message starts warm. Null when there is nothing to prepare: a turn already ran, or the provider starts a fresh
   * conversation every turn anyway.
   */
  prepare(turnId: string): string | null {
    const outcome = this.#driver.apply({
      type: "turn-requested",
      turnId,
      turnKind: "prepare",
      canPrepare: this.setup.adapter.capabilities.resume,
      startedEarlier: this.#startedEarlier,
    });
    if (outcome === "nothing-to-prepare") return null;
    if (outcome === "accepted") this.#startSoon(turnId, PREPARE_TEXT, "prepare");
    return turnId;
  }

  /** Whether the Core before this one started `turnId` (its turn-started event is in the store). */
  readonly #startedEarlier = (turnId: string): boolean => this.setup.restored?.startedTurn(turnId) === true;

  /** Runs the accepted turn once the caller has answered the request. */
  #startSoon(turnId: string, text: string, kind: TurnKind): void {
    const controller = new AbortController();
    let markDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (markDone = resolve));
    const turn: ActiveTurn = { turnId, kind, text, controller, done };
    this.#activeTurn = turn;
    // However the turn is stopped, its tool calls settle without its going on.
    controller.signal.addEventListener("abort", () => this.#driver.apply({ type: "turn-stopping", turnId }), { once: true });
    setImmediate(() => {
      this.#runTurn(turn).finally(markDone);
    });
  }

  /**
   * Stops the running turn and resolves once it is over: the provider's whole process group is gone and its output
   * read. False when no turn was running.
   */
  async cancelTurn(): Promise<boolean> {
    const turn = this.#activeTurn;
    if (!turn) return false;
    turn.controller.abort(new PedelecError("TURN_CANCELLED", "the turn was cancelled"));
    // The agent's scripts are Core's children, not the provider's, so the provider's process group does not take them.
    this.scripts.stopWhere((run) => run.caller === "agent", new PedelecError("DENO_CANCELLED", "the turn was cancelled"));
    await turn.done;
    return true;
  }

  /**
   * Every route to the session's pages is gone. A running turn is stopped after the grace unless `isFollowed` says a
   * route came back by then: nobody would see its events, and its agent would go on acting for nobody.
   */
  watchUnfollowedTurn(isFollowed: () => boolean): void {
    const turn = this.#activeTurn;
    if (!turn || this.#unfollowedTimer) return;
    const graceMs = this.setup.unfollowedTurnGraceMs;
    this.#unfollowedTimer = setTimeout(() => {
      this.#unfollowedTimer = undefined;
      if (this.#activeTurn !== turn || isFollowed()) return;
      turn.controller.abort(new PedelecError("TURN_CANCELLED", `no page has followed session ${this.id} for ${graceMs} ms; the turn was stopped`));
    }, graceMs);
    this.#unfollowedTimer.unref();
  }

  async end(reason: SessionEndReason): Promise<boolean> {
    if (!this.#driver.apply({ type: "session-ending" })) return false;
    if (this.#unfollowedTimer) clearTimeout(this.#unfollowedTimer);
    this.#unfollowedTimer = undefined;
    this.#endController.abort(new PedelecError("SESSION_ENDED", `session ${this.id} has ended`));
    const scriptsStopped = this.scripts.close(new PedelecError("DENO_CANCELLED", `session ${this.id} ended`));
    const turn = this.#activeTurn;
    if (turn) {
      turn.controller.abort(new PedelecError("SESSION_ENDED", `session ${this.id} was ended during the turn`));
      await turn.done;
    }
    await scriptsStopped;
    this.#driver.apply({ type: "session-ended", reason });
    return true;
  }

  /**
   * Core is stopping but the session lives on in the store: the running turn fails with SESSION_ERROR (pages still
   * connected see it now, later ones when they resume), scripts stop, and the next message continues the conversation.
   */
  async suspend(): Promise<void> {
    if (this.#driver.state.ended) return;
    if (this.#unfollowedTimer) clearTimeout(this.#unfollowedTimer);
    this.#unfollowedTimer = undefined;
    const stopped = this.scripts.close(new PedelecError("DENO_CANCELLED", "Core stopped"));
    const turn = this.#activeTurn;
    if (turn) {
      turn.controller.abort(new PedelecError("SESSION_ERROR", "Core stopped during the turn; send the message again to continue"));
      await turn.done;
    }
    await stopped;
    this.#pauseIdleWatch();
  }

  /**
   * The turn that was running when an earlier Core died: its provider was reaped, so it ends here with a coded error,
   * stored and sent like any other event.
   */
  failInterruptedTurn(turn: { turnId: string; turnKind: TurnKind }): void {
    const error = new PedelecError("SESSION_ERROR", "Core stopped while this turn was running; send the message again to continue", {
      cause: "core-stopped",
    });
    this.#driver.apply({ type: "interrupted-turn-failed", turnId: turn.turnId, turnKind: turn.turnKind, error: error.toWire() });
  }

  /**
   * The agent's `pedelec-cli tool-call`: validates, hands the call to the page and waits for its answer.
   * `callerSignal` aborts when the CLI's connection goes away.
   */
  async callTool(toolName: string, argsJson: string, callerSignal: AbortSignal): Promise<JsonValue> {
    if (this.#driver.state.ended) throw sessionEndedError(this.id);
    const tool = this.setup.tools.get(toolName);
    const args = this.setup.tools.parseArgs(toolName, argsJson);
    const turn = this.#activeTurn;
    if (!turn) throw noTurnRunningError(this.id);
    const toolRequestId = randomUUID();
    this.#pauseIdleWatch();
    turn.responseWatch?.pause();
    const call = { turnId: turn.turnId, toolRequestId, toolName, args, timeoutMs: tool.timeoutMs };
    this.#driver.apply({ type: "tool-call-requested", call });
    const settlement = await this.#waitForPage(turn, call, AbortSignal.any([turn.controller.signal, callerSignal]));
    turn.responseWatch?.resume();
    if (settlement.outcome !== "answered") throw settlement.error;
    if (!settlement.result.ok) throw PedelecError.fromWire(settlement.result.error);
    return settlement.result.result;
  }

  /** Exactly one page runs each call: true when the call is (or already was) `claimant`'s, false when another page holds it. */
  claimToolCall(toolRequestId: string, claimant: string): boolean {
    return this.#driver.apply({ type: "tool-call-claimed", toolRequestId, claimant }) !== "held-by-another";
  }

  /**
   * Applies a page's result once. Refused when the call timed out (TOOL_TIMEOUT), is no longer waiting
   * (TOOL_CALL_NOT_PENDING), or another page claimed it (TOOL_CALL_CLAIMED).
   */
  submitToolResult(toolRequestId: string, outcome: ToolResultOutcome, claimant?: string): void {
    this.#settleToolCall(toolRequestId, { outcome: "answered", result: outcome }, claimant);
  }

  /** The pages `isGone` matches left: calls they claimed but did not answer are requested again for the others. */
  releaseToolClaims(isGone: (claimant: string) => boolean): number {
    return this.#driver.apply({ type: "tool-claims-released", isGone }).length;
  }

  /**
   * Waits for a page to settle `call`: its answer, the tool's timeout, or `signal` (the turn stopped, or the agent's
   * CLI went away: abandoned when its connection closed).
   */
  #waitForPage(turn: ActiveTurn, call: PendingToolCall, signal: AbortSignal): Promise<ToolCallSettlement> {
    const { toolRequestId, timeoutMs } = call;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const error = new PedelecError("TOOL_TIMEOUT", `the application did not answer within ${timeoutMs} ms`);
        this.#settleToolCall(toolRequestId, { outcome: "timed-out", error });
      }, timeoutMs);
      const onAbort = (): void => {
        const reason: unknown = signal.reason;
        const error = reason instanceof PedelecError ? reason : new PedelecError("TURN_CANCELLED", "the tool call was cancelled");
        // A call settled because its turn stopped does not set the turn going again.
        if (turn.controller.signal.aborted) this.#driver.apply({ type: "turn-stopping", turnId: turn.turnId });
        this.#settleToolCall(toolRequestId, { outcome: error.code === "IPC_UNAVAILABLE" ? "abandoned" : "cancelled", error });
      };
      this.#toolWaits.set(toolRequestId, (settlement) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        resolve(settlement);
      });
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** The machine settles the call once (a late or refused settlement throws or does nothing); its wait ends with it. */
  #settleToolCall(toolRequestId: string, settlement: ToolCallSettlement, claimant?: string): void {
    const settling =
      settlement.outcome === "answered"
        ? this.#driver.apply({ type: "tool-call-answered", toolRequestId, claimant })
        : this.#driver.apply({ type: "tool-call-settled", toolRequestId, outcome: settlement.outcome });
    if (settling === "not-pending") return;
    const wake = this.#toolWaits.get(toolRequestId);
    this.#toolWaits.delete(toolRequestId);
    wake?.(settlement);
    // The turn runs again: the provider's silence counts from now.
    if (settling === "resumed" && this.#activeTurn !== null) this.#armIdleWatch(this.#activeTurn);
  }

  async #runTurn(turn: ActiveTurn): Promise<void> {
    const { setup } = this;
    this.#driver.apply({ type: "turn-began", turnId: turn.turnId });
    // What the assets folder holds now: the files the turn adds or changes are its artifacts.
    const assetsBefore = await this.#assetSnapshot();
    this.#armIdleWatch(turn);
    const timeoutMs = setup.modelResponseTimeoutMs;
    const responseWatch = new ModelResponseWatch(timeoutMs, () => {
      // What the provider last said about itself tells the user why: "Claude is retrying: overloaded (HTTP 529)…".
      const notice = responseWatch.lastNotice?.title;
      turn.controller.abort(
        new PedelecError(
          "PROVIDER_TIMEOUT",
          `${setup.adapter.displayName}'s model made no progress for ${Math.round(timeoutMs / 1000)} s and the turn was stopped` +
            (notice === undefined ? "" : ` (last: ${notice})`),
          { timeoutSeconds: timeoutMs / 1000, retriable: true, ...(notice === undefined ? {} : { lastNotice: notice }) },
        ),
      );
    });
    turn.responseWatch = responseWatch;
    const recordings: Promise<number>[] = [];
    // A provider that cannot resume starts a fresh conversation, with the whole first prompt, every turn.
    const resumeId = setup.adapter.capabilities.resume ? this.#providerSessionId : null;
    let outcome = await this.#runProvider(turn, resumeId, recordings);
    if (!outcome.ok && outcome.conversationLost && resumeId !== null && !turn.controller.signal.aborted) {
      // The provider no longer has the conversation (its state was deleted, or it lives elsewhere): every later turn
      // would fail the same way, so start a new one with the full first prompt and say so.
      this.#providerSessionId = null;
      this.setup.onProviderSessionId?.(null);
      this.#emit({
        type: "activity-updated",
        turnId: turn.turnId,
        activity: {
          id: `conversation-restarted-${turn.turnId}`,
          kind: "other",
          status: "completed",
          title: `${setup.adapter.displayName} no longer had the earlier conversation; started a new one`,
          detail: outcome.error.message,
        },
      });
      outcome = await this.#runProvider(turn, null, recordings);
    }
    this.#pauseIdleWatch();
    turn.responseWatch.stop();
    for (const pid of await Promise.all(recordings)) await setup.processLedger.forget(pid).catch(() => undefined);
    if (assetsBefore !== null) await this.#reportArtifacts(turn, assetsBefore);
    // Anything still waiting on this turn (a tool call whose CLI outlived the provider) ends with it.
    if (!turn.controller.signal.aborted) {
      turn.controller.abort(new PedelecError("TURN_CANCELLED", "the turn is over"));
    }
    this.#activeTurn = null;
    // The status the turn leaves goes first: a page whose sendText() settles on the turn's end then already shows it.
    this.#driver.apply(
      outcome.ok ? { type: "turn-ended", turnId: turn.turnId } : { type: "turn-ended", turnId: turn.turnId, error: outcome.error.toWire() },
    );
  }

  /** One run of the provider for `turn`: continuing `resumeId`, or a new conversation that gets the first prompt. */
  async #runProvider(turn: ActiveTurn, resumeId: string | null, recordings: Promise<number>[]): Promise<ProviderTurnOutcome> {
    const { setup } = this;
    const env = this.#providerEnv(await setup.loginShellPath());
    // A new provider run counts its tokens from zero; what an earlier run of this turn used stays in the turn's usage.
    this.#reduceUsage({ type: "run-started", turnId: turn.turnId });
    const nativeToolName = setup.adapter.nativeToolName?.bind(setup.adapter);
    const prompt =
      resumeId === null
        ? buildFirstPrompt({
            threadId: this.id,
            guidance: setup.guidance,
            tools: setup.tools.list(),
            userText: turn.text,
            ...(nativeToolName ? { nativeToolName } : {}),
          })
        : turn.text;
    return setup.adapter.runTurn(
      {
        executablePath: setup.executablePath,
        prompt,
        workspacePath: setup.workspace.path,
        providerSessionId: resumeId,
        access: setup.access,
        model: setup.model,
        effortArgv: setup.effortArgv,
        ...(setup.providerOptions !== undefined ? { providerOptions: setup.providerOptions } : {}),
        env,
        toolServer: {
          command: join(setup.binDir, "pedelec-cli"),
          args: [SESSION_TOOL_SERVER_COMMAND],
          envNames: ["PEDELEC_HOME", "PEDELEC_THREAD_ID", THREAD_CAPABILITY_ENV],
        },
        signal: turn.controller.signal,
        onProcessStarted: (pid, processTag) => {
          recordings.push(
            setup.processLedger.record(pid, processTag).then(
              () => pid,
              () => pid,
            ),
          );
        },
      },
      (event) => this.#onProviderEvent(turn, event),
    );
  }

  #onProviderEvent(turn: ActiveTurn, event: ProviderEvent): void {
    if (turn.controller.signal.aborted) return;
    if (this.#driver.state.toolCalls.waiting.length === 0) this.#armIdleWatch(turn);
    turn.responseWatch?.observe(event);
    switch (event.type) {
      case "provider-session-started":
        this.#providerSessionId = event.providerSessionId;
        this.setup.onProviderSessionId?.(event.providerSessionId);
        return;
      case "text-delta":
        this.#driver.pushDelta({ turnId: turn.turnId, messageId: event.messageId, delta: event.delta });
        return;
      case "message-completed":
        // Without deltas of its own the provider's message still reaches delta-driven apps, once, whole.
        if (!this.setup.adapter.capabilities.textDeltas) {
          this.#emit({ type: "chat-delta", turnId: turn.turnId, messageId: event.messageId, delta: event.text });
        }
        this.#emit({ type: "chat-completed", turnId: turn.turnId, messageId: event.messageId, text: event.text });
        return;
      case "activity":
        this.#emit({ type: "activity-updated", turnId: turn.turnId, activity: event.activity });
        return;
      case "usage":
        this.#reduceUsage({ type: "reported", turnId: turn.turnId, usage: event.usage });
        return;
      case "output-seen":
        return;
    }
  }

  #providerEnv(loginShellPath: readonly string[]): Record<string, string> {
    const { setup } = this;
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(setup.baseEnv)) {
      if (value !== undefined) env[key] = value;
    }
    env.PATH = [setup.binDir, setup.baseEnv.PATH ?? "", ...loginShellPath].filter((part) => part !== "").join(delimiter);
    env.PEDELEC_HOME = setup.home;
    env.PEDELEC_THREAD_ID = this.id;
    env[THREAD_CAPABILITY_ENV] = setup.capability.secret;
    env.PEDELEC_PROVIDER = setup.provider;
    env.PEDELEC_WORKSPACE = setup.workspace.path;
    if (setup.model !== null) env.PEDELEC_MODEL = setup.model;
    return env;
  }

  /**
   * A provider that says nothing for too long, while not waiting on the page, is treated as hung. Called for every
   * provider event, so it only notes the time; the one timer checks it when it fires (re-creating a timer per event
   * cost more than parsing a fast stream).
   */
  #armIdleWatch(turn: ActiveTurn): void {
    this.#lastOutputAt = performance.now();
    if (this.#idleTimer !== undefined && this.#idleTurn === turn) return;
    this.#pauseIdleWatch();
    this.#idleTurn = turn;
    const timeoutMs = this.setup.providerIdleTimeoutMs;
    const check = (): void => {
      const quietMs = performance.now() - this.#lastOutputAt;
      if (quietMs < timeoutMs) {
        this.#idleTimer = setTimeout(check, timeoutMs - quietMs);
        return;
      }
      this.#idleTimer = undefined;
      turn.controller.abort(
        new PedelecError("PROVIDER_FAILED", `${this.setup.provider} produced no output for ${Math.round(timeoutMs / 1000)} s and was stopped`),
      );
    };
    this.#idleTimer = setTimeout(check, timeoutMs);
  }

  #pauseIdleWatch(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.#idleTurn = undefined;
  }

  /** Applies a usage input; a change goes out joined with those that follow it closely. */
  #reduceUsage(input: SessionUsageInput): void {
    const { state, update } = reduceSessionUsage(this.#usage, input);
    this.#usage = state;
    if (update !== undefined) this.#driver.pushUsage(update);
  }

  /** The assets folder's files, or null (and no artifacts for the turn) when it cannot be listed. */
  async #assetSnapshot(): Promise<AssetSnapshot | null> {
    try {
      return await assetSnapshot(this.setup.workspace.path);
    } catch (error) {
      log("warn", "could not list the assets folder; the turn reports no artifacts", { sessionId: this.id, error: String(error) });
      return null;
    }
  }

  /** One artifact-created event per file the turn wrote or changed in the assets folder, then how many more if any. */
  async #reportArtifacts(turn: ActiveTurn, before: AssetSnapshot): Promise<void> {
    let found: Awaited<ReturnType<typeof artifactsSince>>;
    try {
      found = await artifactsSince(this.setup.workspace.path, before);
    } catch (error) {
      log("warn", "could not list the assets folder; the turn reports no artifacts", { sessionId: this.id, error: String(error) });
      return;
    }
    for (const artifact of found.artifacts) this.#emit({ type: "artifact-created", turnId: turn.turnId, artifact });
    if (found.more > 0) {
      this.#emit({
        type: "activity-updated",
        turnId: turn.turnId,
        activity: {
          id: `artifacts-more-${turn.turnId}`,
          kind: "other",
          status: "completed",
          title: `${found.more} more files in the assets folder were written; listAssets() shows them`,
        },
      });
    }
  }

  #emit(event: PublishedSessionEvent): void {
    this.#driver.apply({ type: "event-published", event });
  }

  /** The envelope an event goes out in. */
  #envelope(seq: number, event: SessionEvent): SessionEventEnvelope {
    const envelope: SessionEventEnvelope = { type: "event", sessionId: this.id, seq, emittedAt: new Date().toISOString(), event };
    // Inputs are bounded before they become events; should one still be unsendable, it must not take a seq that
    // nobody would ever receive (pages would see a gap), so an error saying what was lost goes out in its place.
    const problem = eventFrameProblem(envelope);
    if (problem !== undefined) {
      log("warn", "replaced a session event that cannot be sent", { sessionId: this.id, type: event.type, problem });
      const turnId = "turnId" in event ? event.turnId : undefined;
      const error = { code: "MESSAGE_TOO_LARGE" as const, message: `a ${event.type} event could not be sent: ${problem}` };
      envelope.event = turnId === undefined ? { type: "error-reported", error } : { type: "error-reported", error, turnId };
    }
    return envelope;
  }
}
