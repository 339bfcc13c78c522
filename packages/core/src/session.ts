import { randomUUID } from "node:crypto";
import { delimiter } from "node:path";
import type { EffortLevel, JsonValue, ProviderCode, SessionStatus, TurnKind, AccessMode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { THREAD_CAPABILITY_ENV, type SessionInfo, type ToolResultOutcome } from "@pedelec/protocol/requests";
import type { SessionEvent, SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { eventFrameProblem } from "./event-frame-check.js";
import { buildFirstPrompt } from "./first-prompt.js";
import { log } from "./logger.js";
import type { ProcessGroupLedger } from "./process-group-ledger.js";
import type { ProviderAdapter, ProviderEvent, ProviderTurnOutcome } from "./providers/provider-adapter.js";
import { ToolCallWaiter } from "./tool-call-waiter.js";
import type { ToolRegistry } from "./tool-registry.js";
import type { ThreadCapability } from "./thread-capability.js";
import type { PreparedWorkspace } from "./workspace.js";
import type { ScriptRunner } from "@pedelec/script-runtime/script-runner";
import { SessionScripts } from "./session-scripts.js";

export interface SessionSetup {
  id: string;
  origin: string;
  provider: ProviderCode;
  adapter: ProviderAdapter;
  executablePath: string;
  effortLevel: EffortLevel;
  /** Snapshotted at creation; later edits to settings do not reach this session. */
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
  /** The user's login-shell PATH, after Core's own: a CLI started by a browser-launched Core still finds `node`. */
  loginShellPath: readonly string[];
  home: string;
  baseEnv: NodeJS.ProcessEnv;
  providerIdleTimeoutMs: number;
  unfollowedTurnGraceMs: number;
  /** Where provider processes are recorded while they run, so a later Core can reap them if this one is killed. */
  processLedger: ProcessGroupLedger;
  /** Core's script runner, created on first use. */
  scriptRunner: () => Promise<ScriptRunner>;
  /** The HTTP endpoint of a provider that calls one itself (ollama), snapshotted like the effort profile. */
  endpoint?: { baseUrl: string; apiKey: string };
  publish: (envelope: SessionEventEnvelope) => void;
}

export type SessionEndReason = "requested" | "disconnected" | "shutdown" | "full-access-revoked";

interface ActiveTurn {
  turnId: string;
  kind: TurnKind;
  text: string;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * One agent session: owns its status machine, its event sequence, the one active turn and the tool calls of
 * that turn. Core's socket layer only translates requests into calls on this class.
 */
export class Session {
  readonly createdAt = new Date().toISOString();
  #status: SessionStatus = "idle";
  #seq = 0;
  #providerSessionId: string | null = null;
  #activeTurn: ActiveTurn | null = null;
  #ended = false;
  readonly #endController = new AbortController();
  readonly #toolCalls = new ToolCallWaiter();
  #idleTimer: NodeJS.Timeout | undefined;
  #unfollowedTimer: NodeJS.Timeout | undefined;

  /** Scripts run by the page (`workspace.run()`) and by the agent (`pedelec-ts-runtime`). */
  readonly scripts: SessionScripts;

  constructor(readonly setup: SessionSetup) {
    this.scripts = new SessionScripts({ threadId: setup.id, workspaceRoot: setup.workspace.path, runner: setup.scriptRunner });
  }

  get id(): string {
    return this.setup.id;
  }
  get origin(): string {
    return this.setup.origin;
  }
  get status(): SessionStatus {
    return this.#status;
  }
  get ended(): boolean {
    return this.#ended;
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
      model: setup.model,
      sessionCreatedAt: this.createdAt,
      status: this.#status,
      workspace: { path: setup.workspace.path, managed: setup.workspace.managed },
      access: setup.access,
      autoEndOnDisconnect: setup.autoEndOnDisconnect,
      toolNames: setup.tools.names,
      lastSeq: this.#seq,
    };
  }

  /** Accepts a turn and starts it after the caller has answered the request (so the reply precedes its events). */
  startTurn(turnId: string, text: string, kind: TurnKind = "user"): void {
    if (this.#ended) throw new PedelecError("SESSION_ENDED", `session ${this.id} has ended`);
    if (this.#activeTurn) throw new PedelecError("SESSION_BUSY", `session ${this.id} is already running a turn`);
    const controller = new AbortController();
    let markDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (markDone = resolve));
    const turn: ActiveTurn = { turnId, kind, text, controller, done };
    this.#activeTurn = turn;
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
      turn.controller.abort(
        new PedelecError("TURN_CANCELLED", `no page has followed session ${this.id} for ${graceMs} ms; the turn was stopped`),
      );
    }, graceMs);
    this.#unfollowedTimer.unref();
  }

  async end(reason: SessionEndReason): Promise<boolean> {
    if (this.#ended) return false;
    this.#ended = true;
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
    this.#setStatus("ended");
    this.#emit({ type: "session-ended", reason });
    return true;
  }

  /**
   * The agent's `pedelec-cli tool-call`: validates, hands the call to the page and waits for its answer.
   * `callerSignal` aborts when the CLI's connection goes away.
   */
  async callTool(toolName: string, argsJson: string, callerSignal: AbortSignal): Promise<JsonValue> {
    if (this.#ended) throw new PedelecError("SESSION_ENDED", `session ${this.id} has ended`);
    const tool = this.setup.tools.get(toolName);
    const args = this.setup.tools.parseArgs(toolName, argsJson);
    const turn = this.#activeTurn;
    if (!turn) {
      throw new PedelecError("INVALID_INPUT", `no turn is running in thread ${this.id}; tools can only be called during a turn`);
    }
    const toolRequestId = randomUUID();
    this.#pauseIdleWatch();
    const settled = this.#toolCalls.wait(
      toolRequestId,
      turn.turnId,
      tool.timeoutMs,
      AbortSignal.any([turn.controller.signal, callerSignal]),
    );
    this.#emit({ type: "tool-call-requested", turnId: turn.turnId, toolRequestId, toolName, args, timeoutMs: tool.timeoutMs });
    this.#setStatus("waiting_tool_result", turn.turnId);
    const settlement = await settled;
    this.#emit({ type: "tool-call-settled", turnId: turn.turnId, toolRequestId, outcome: settlement.outcome });
    if (this.#activeTurn === turn && this.#toolCalls.size === 0 && !turn.controller.signal.aborted) {
      this.#setStatus("running", turn.turnId);
      this.#armIdleWatch(turn);
    }
    if (settlement.outcome !== "answered") throw settlement.error;
    if (!settlement.result.ok) throw PedelecError.fromWire(settlement.result.error);
    return settlement.result.result;
  }

  submitToolResult(toolRequestId: string, outcome: ToolResultOutcome): boolean {
    return this.#toolCalls.answer(toolRequestId, outcome);
  }

  async #runTurn(turn: ActiveTurn): Promise<void> {
    const { setup } = this;
    this.#emit({ type: "turn-started", turnId: turn.turnId, turnKind: turn.kind });
    this.#setStatus("running", turn.turnId);
    this.#armIdleWatch(turn);
    const recordings: Promise<number>[] = [];
    // A provider that cannot resume starts a fresh conversation, with the whole first prompt, every turn.
    const resumeId = setup.adapter.capabilities.resume ? this.#providerSessionId : null;
    let outcome = await this.#runProvider(turn, resumeId, recordings);
    if (!outcome.ok && outcome.conversationLost && resumeId !== null && !turn.controller.signal.aborted) {
      // The provider no longer has the conversation (its state was deleted, or it lives elsewhere): every later turn
      // would fail the same way, so start a new one with the full first prompt and say so.
      this.#providerSessionId = null;
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
    for (const pid of await Promise.all(recordings)) await setup.processLedger.forget(pid).catch(() => undefined);
    // Anything still waiting on this turn (a tool call whose CLI outlived the provider) ends with it.
    if (!turn.controller.signal.aborted) {
      turn.controller.abort(new PedelecError("TURN_CANCELLED", "the turn is over"));
    }
    this.#activeTurn = null;
    if (outcome.ok) {
      this.#emit({ type: "turn-completed", turnId: turn.turnId, turnKind: turn.kind });
      this.#setStatus("idle", turn.turnId);
      return;
    }
    this.#emit({ type: "turn-failed", turnId: turn.turnId, turnKind: turn.kind, error: outcome.error.toWire() });
    if (this.#ended) return;
    this.#setStatus(outcome.error.code === "TURN_CANCELLED" ? "idle" : "error", turn.turnId);
  }

  /** One run of the provider for `turn`: continuing `resumeId`, or a new conversation that gets the first prompt. */
  #runProvider(turn: ActiveTurn, resumeId: string | null, recordings: Promise<number>[]): Promise<ProviderTurnOutcome> {
    const { setup } = this;
    const prompt =
      resumeId === null
        ? buildFirstPrompt({ threadId: this.id, guidance: setup.guidance, tools: setup.tools.list(), userText: turn.text })
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
        ...(setup.endpoint ? { endpoint: setup.endpoint } : {}),
        env: this.#providerEnv(),
        signal: turn.controller.signal,
        onProcessStarted: (pid) => {
          recordings.push(setup.processLedger.record(pid).then(() => pid, () => pid));
        },
      },
      (event) => this.#onProviderEvent(turn, event),
    );
  }

  #onProviderEvent(turn: ActiveTurn, event: ProviderEvent): void {
    if (turn.controller.signal.aborted) return;
    if (this.#toolCalls.size === 0) this.#armIdleWatch(turn);
    switch (event.type) {
      case "provider-session-started":
        this.#providerSessionId = event.providerSessionId;
        return;
      case "text-delta":
        this.#emit({ type: "chat-delta", turnId: turn.turnId, messageId: event.messageId, delta: event.delta });
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
      case "output-seen":
        return;
    }
  }

  #providerEnv(): Record<string, string> {
    const { setup } = this;
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(setup.baseEnv)) {
      if (value !== undefined) env[key] = value;
    }
    env.PATH = [setup.binDir, setup.baseEnv.PATH ?? "", ...setup.loginShellPath].filter((part) => part !== "").join(delimiter);
    env.PEDELEC_HOME = setup.home;
    env.PEDELEC_THREAD_ID = this.id;
    env[THREAD_CAPABILITY_ENV] = setup.capability.secret;
    env.PEDELEC_PROVIDER = setup.provider;
    env.PEDELEC_WORKSPACE = setup.workspace.path;
    if (setup.model !== null) env.PEDELEC_MODEL = setup.model;
    return env;
  }

  /** A provider that says nothing for too long, while not waiting on the page, is treated as hung. */
  #armIdleWatch(turn: ActiveTurn): void {
    this.#pauseIdleWatch();
    const timeoutMs = this.setup.providerIdleTimeoutMs;
    this.#idleTimer = setTimeout(() => {
      turn.controller.abort(
        new PedelecError("PROVIDER_FAILED", `${this.setup.provider} produced no output for ${Math.round(timeoutMs / 1000)} s and was stopped`),
      );
    }, timeoutMs);
  }

  #pauseIdleWatch(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  #setStatus(status: SessionStatus, turnId?: string): void {
    if (this.#status === status) return;
    this.#status = status;
    this.#emit(turnId === undefined ? { type: "status-changed", status } : { type: "status-changed", status, turnId });
  }

  #emit(event: SessionEvent): void {
    const envelope: SessionEventEnvelope = { type: "event", sessionId: this.id, seq: this.#seq + 1, emittedAt: new Date().toISOString(), event };
    // Inputs are bounded before they become events; should one still be unsendable, it must not take a seq that
    // nobody would ever receive (pages would see a gap), so an error saying what was lost goes out in its place.
    const problem = eventFrameProblem(envelope);
    if (problem !== undefined) {
      log("warn", "replaced a session event that cannot be sent", { sessionId: this.id, type: event.type, problem });
      const turnId = "turnId" in event ? event.turnId : undefined;
      const error = { code: "MESSAGE_TOO_LARGE" as const, message: `a ${event.type} event could not be sent: ${problem}` };
      envelope.event = turnId === undefined ? { type: "error-reported", error } : { type: "error-reported", error, turnId };
    }
    this.#seq = envelope.seq;
    this.setup.publish(envelope);
  }
}
