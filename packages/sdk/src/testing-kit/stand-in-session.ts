// One session of the stand-in desktop runtime, following Core's Session (packages/core/src/session.ts): its status
// machine, its event sequence, one active turn, the tool calls of that turn and their claims. Every event is checked
// against the protocol's envelope schema before it takes a seq.
import type { AccessMode, EffortLevel, ProviderCode, SessionStatus, TurnKind } from "@pedelec/protocol/domain";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { StartedTurnIds } from "@pedelec/protocol/started-turn-ids";
import { SettledToolCalls } from "@pedelec/protocol/settled-tool-calls";
import { ChatDeltaJoiner } from "@pedelec/protocol/chat-delta-joiner";
import { reduceSessionUsage, sessionUsageState, sessionUsageTotal, type SessionUsageState } from "@pedelec/protocol/session-usage";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
import { UsageUpdateJoiner } from "@pedelec/protocol/usage-update-joiner";
import type { SessionInfo, ToolResultOutcome } from "@pedelec/protocol/requests";
import {
  sessionEventEnvelopeSchema,
  type PendingToolCall,
  type SessionEndReason,
  type SessionEvent,
  type SessionEventEnvelope,
} from "@pedelec/protocol/session-events";
import { DEFAULT_TOOL_TIMEOUT_MS, type ToolManifestEntry } from "@pedelec/protocol/tool-schema";
import type { JsonValue } from "../types.js";
import { argsSchemaChecker, type ArgsIssue } from "../tool-schema/args-schema-validator.js";
import type { KitTimers } from "./kit-timers.js";
import { KitTurn, type TurnDriver } from "./scripted-turn.js";
import type { ScriptedActivity, ScriptedToolCallOptions, ScriptedTurnEnd, TestKitToolCall } from "./types.js";

/** The user text of a prepare turn, which the desktop sends with the first prompt (guidance and tool index). */
const PREPARE_TEXT = "Prepare the session: reply that you are ready; do not run commands or call tools yet.";

export interface StandInSessionSetup {
  sessionId: string;
  origin: string;
  provider: ProviderCode;
  effortLevel: EffortLevel;
  model: string | null;
  workspace: { path: string; managed: boolean };
  access: AccessMode;
  autoEndOnDisconnect: boolean;
  guidance: string;
  tools: readonly ToolManifestEntry[];
  prepareTurns: boolean;
  toolTimeoutMs: number;
  agentIdleTimeoutMs: number;
  timers: KitTimers;
  /** Fresh ids for messages, activities and tool calls, unique in the kit. */
  nextId: (prefix: string) => string;
  /** Every event, in seq order, once it is checked and kept. */
  publish: (envelope: SessionEventEnvelope) => void;
  /** Hands a started turn to the agent script. */
  runAgent: (turn: KitTurn) => void;
  /** A tool call was made; the record is updated in place as it settles. */
  recordToolCall: (record: TestKitToolCall) => void;
  /** The page a claimant (a port of the extension) belongs to. */
  pageOf: (claimant: string) => string;
  /** How many pages follow this session now. */
  followers: () => number;
}

type Settlement =
  | { outcome: "answered"; answer: ToolResultOutcome }
  | { outcome: "timed-out" | "cancelled" | "abandoned"; error: PedelecError };

interface PendingCall {
  readonly call: PendingToolCall;
  readonly turn: KitTurn;
  readonly record: TestKitToolCall;
  claimant: string | undefined;
  cancelTimer: () => void;
  resolve: (settlement: Settlement) => void;
}

/** How many argument problems a TOOL_ARGS_INVALID message names; the rest are only counted, as Core does. */
const REPORTED_PROBLEMS = 3;

export class StandInSession implements TurnDriver {
  readonly setup: StandInSessionSetup;
  readonly createdAt = new Date().toISOString();
  #status: SessionStatus = "idle";
  #seq = 0;
  readonly #kept: SessionEventEnvelope[] = [];
  #hadTurn = false;
  readonly #startedTurnIds = new StartedTurnIds();
  #active: KitTurn | undefined;
  #ended = false;
  /** The desktop runtime is up; while it is not, nothing is emitted and the running turn is gone. */
  #coreUp = true;
  /** The turn that ran when the desktop was killed: failed once it is back, as a restarted Core does. */
  #interrupted: { turnId: string; turnKind: TurnKind } | undefined;
  readonly #pending = new Map<string, PendingCall>();
  readonly #settled = new SettledToolCalls();
  /** The assistant message the active turn is writing. */
  #message: { id: string; text: string } | undefined;
  /** Deltas written in one tick, joined into one event as Core joins those that follow each other closely. */
  readonly #deltas = new ChatDeltaJoiner({
    send: (part) => {
      if (this.#coreUp) this.#emitEnvelope({ type: "chat-delta", ...part });
    },
    later: (callback) => queueMicrotask(callback),
  });
  /** The tokens used, kept as Core keeps them (session-usage.ts). */
  #usage: SessionUsageState = sessionUsageState();
  /** The session's total in the newest usage update sent: what Core's store holds, so all a killed desktop leaves. */
  #sentUsage: TokenUsage = {};
  /** Usage updates of one tick, joined as Core joins those of one display frame. */
  readonly #usageUpdates = new UsageUpdateJoiner({
    send: (update) => {
      if (!this.#coreUp) return;
      this.#deltas.flush();
      this.#emitEnvelope({ type: "usage-updated", ...update });
      this.#sentUsage = update.sessionUsage;
    },
    later: (callback) => queueMicrotask(callback),
  });
  #cancelIdleWatch: (() => void) | undefined;
  /** Each tool's argument check, built on its first call. */
  readonly #argsCheckers = new Map<string, (args: unknown) => ArgsIssue[]>();

  constructor(setup: StandInSessionSetup) {
    this.setup = setup;
  }

  get id(): string {
    return this.setup.sessionId;
  }

  get ended(): boolean {
    return this.#ended;
  }

  get status(): SessionStatus {
    return this.#status;
  }

  info(): SessionInfo {
    const { setup } = this;
    return {
      sessionId: setup.sessionId,
      provider: setup.provider,
      effortLevel: setup.effortLevel,
      model: setup.model,
      sessionCreatedAt: this.createdAt,
      status: this.#status,
      workspace: { ...setup.workspace },
      access: setup.access,
      autoEndOnDisconnect: setup.autoEndOnDisconnect,
      toolNames: setup.tools.map((tool) => tool.name),
      lastSeq: this.#seq,
      activeTurn: this.#active === undefined ? null : { turnId: this.#active.turnId, turnKind: this.#active.kind },
      pendingToolCalls: [...this.#pending.values()].map((pending) => ({ ...pending.call })),
      usage: sessionUsageTotal(this.#usage),
    };
  }

  /** Every event kept, in order (copies). */
  events(): SessionEventEnvelope[] {
    return this.#kept.map((envelope) => jsonCopy(envelope));
  }

  /** The kept events after `afterSeq` up to `upToSeq`, for a resume's replay. */
  eventsBetween(afterSeq: number, upToSeq: number): SessionEventEnvelope[] {
    return this.#kept.filter((envelope) => envelope.seq > afterSeq && envelope.seq <= upToSeq);
  }

  /**
   * Accepts a turn; the returned function starts it and must be called once the request's answer is on its way, so the
   * answer precedes the turn's events.
   */
  startTurn(turnId: string, text: string, kind: TurnKind = "user"): () => void {
    this.#requireCore();
    // As Core: a turn id started before (a request sent again after a lost link) starts nothing.
    if (this.#startedTurnIds.has(turnId)) return () => undefined;
    this.#requireOpen();
    if (this.#active !== undefined) throw new PedelecError("SESSION_BUSY", `session ${this.id} is already running a turn`);
    const turn = new KitTurn(
      {
        turnId,
        kind,
        text,
        session: this.info(),
        guidance: this.setup.guidance,
        tools: this.setup.tools.map((tool) => jsonCopy(tool)),
        isFirstTurn: !this.#hadTurn,
      },
      this,
    );
    this.#active = turn;
    this.#hadTurn = true;
    this.#startedTurnIds.remember(turnId);
    return () => this.#begin(turn);
  }

  /** Starts a hidden prepare turn, or answers null when there is nothing to prepare. */
  prepare(turnId: string): { turnId: string | null; begin?: () => void } {
    this.#requireCore();
    if (this.#startedTurnIds.has(turnId)) return { turnId };
    this.#requireOpen();
    if (this.#active !== undefined) throw new PedelecError("SESSION_BUSY", `session ${this.id} is already running a turn`);
    if (this.#hadTurn || !this.setup.prepareTurns) return { turnId: null };
    return { turnId, begin: this.startTurn(turnId, PREPARE_TEXT, "prepare") };
  }

  /** Stops the running turn (TURN_CANCELLED); false when none was running. */
  cancelTurn(): boolean {
    this.#requireCore();
    const turn = this.#active;
    if (turn === undefined || this.#ended) return false;
    this.#finish(turn, { ok: false, error: new PedelecError("TURN_CANCELLED", "the turn was cancelled") });
    return true;
  }

  end(reason: SessionEndReason): boolean {
    if (this.#ended) return false;
    this.#requireCore();
    this.#ended = true;
    const turn = this.#active;
    if (turn !== undefined) {
      this.#finish(turn, { ok: false, error: new PedelecError("SESSION_ENDED", `session ${this.id} was ended during the turn`) });
    }
    this.#setStatus("ended");
    this.#emit({ type: "session-ended", reason });
    return true;
  }

  /** Exactly one page runs each call: true when the call is (or already was) `claimant`'s. */
  claimToolCall(toolRequestId: string, claimant: string): boolean {
    this.#requireOpen();
    const pending = this.#requirePending(toolRequestId);
    if (pending.claimant !== undefined && pending.claimant !== claimant) return false;
    if (pending.claimant === undefined) pending.record.claimedBy = this.setup.pageOf(claimant);
    pending.claimant = claimant;
    return true;
  }

  /** A page's answer, applied once. */
  submitToolResult(toolRequestId: string, answer: ToolResultOutcome, claimant: string | undefined): void {
    this.#requireOpen();
    const pending = this.#requirePending(toolRequestId);
    if (pending.claimant !== undefined && pending.claimant !== claimant) {
      throw new PedelecError("TOOL_CALL_CLAIMED", `tool call ${toolRequestId} is being answered by another page`);
    }
    this.#settle(pending, { outcome: "answered", answer });
  }

  /** A page went away: the calls it claimed and did not answer are requested again for the others. */
  releaseToolClaims(claimant: string): number {
    if (this.#ended || !this.#coreUp) return 0;
    let released = 0;
    for (const pending of this.#pending.values()) {
      if (pending.claimant !== claimant) continue;
      pending.claimant = undefined;
      pending.record.claimedBy = undefined;
      this.#emit({ type: "tool-call-requested", ...pending.call });
      released += 1;
    }
    return released;
  }

  /**
   * The desktop runtime went away. Killed: the running turn and its tool calls vanish without a word (the page hears
   * of it from the extension), and the turn fails once the desktop is back. Stopped: the turn fails with SESSION_ERROR
   * first, as Core does when it shuts down.
   */
  loseCore(how: "killed" | "stopped"): void {
    if (!this.#coreUp) return;
    const turn = this.#active;
    if (how === "stopped") {
      if (turn !== undefined) {
        this.#finish(turn, {
          ok: false,
          error: new PedelecError("SESSION_ERROR", "Core stopped during the turn; send the message again to continue"),
        });
      }
      this.#coreUp = false;
      return;
    }
    this.#coreUp = false;
    // A killed Core takes with it what it had not sent; the next one starts from the stored total.
    this.#usageUpdates.discard();
    this.#usage = sessionUsageState(this.#sentUsage);
    if (turn === undefined) return;
    const error = new PedelecError("CORE_RUNTIME_UNAVAILABLE", "the connection to Pedelec Core closed");
    this.#interrupted = { turnId: turn.turnId, turnKind: turn.kind };
    this.#finish(turn, { ok: false, error });
  }

  /** The desktop runtime is back: a turn it lost while running ends with SESSION_ERROR, stored and sent like any event. */
  restoreCore(): void {
    if (this.#coreUp) return;
    this.#coreUp = true;
    const interrupted = this.#interrupted;
    this.#interrupted = undefined;
    if (this.#ended || interrupted === undefined) return;
    const error = new PedelecError("SESSION_ERROR", "Core stopped while this turn was running; send the message again to continue", {
      cause: "core-stopped",
    });
    this.#setStatus("error", interrupted.turnId);
    this.#emit({ type: "turn-failed", turnId: interrupted.turnId, turnKind: interrupted.turnKind, error: error.toWire() });
  }

  /** Stops everything without a word (the kit is being disposed). */
  dispose(): void {
    this.#coreUp = false;
    const turn = this.#active;
    if (turn !== undefined) this.#finish(turn, { ok: false, error: new PedelecError("SESSION_ERROR", "the test kit was disposed") });
  }

  // TurnDriver: what the agent script does with its turn.

  delta(turn: KitTurn, text: string): void {
    if (this.#active !== turn) return;
    this.#armIdleWatch(turn);
    this.#message ??= { id: this.setup.nextId("message"), text: "" };
    this.#message.text += text;
    this.#deltas.push({ turnId: turn.turnId, messageId: this.#message.id, delta: text });
  }

  message(turn: KitTurn, text: string | undefined): string | undefined {
    if (this.#active !== turn) return undefined;
    this.#armIdleWatch(turn);
    const current = this.#message;
    if (current === undefined && text === undefined) return undefined;
    this.#message = undefined;
    if (current === undefined) {
      // A message without deltas still reaches delta-driven apps once, whole, as from a provider that does not stream.
      const messageId = this.setup.nextId("message");
      this.#emit({ type: "chat-delta", turnId: turn.turnId, messageId, delta: text ?? "" });
      this.#emit({ type: "chat-completed", turnId: turn.turnId, messageId, text: text ?? "" });
      return messageId;
    }
    this.#emit({ type: "chat-completed", turnId: turn.turnId, messageId: current.id, text: text ?? current.text });
    return current.id;
  }

  activity(turn: KitTurn, input: ScriptedActivity): string {
    const id = input.id ?? this.setup.nextId("activity");
    if (this.#active !== turn) return id;
    this.#armIdleWatch(turn);
    const activity = {
      id,
      kind: input.kind ?? "other",
      status: input.status ?? "completed",
      title: input.title,
      ...(input.detail === undefined ? {} : { detail: input.detail }),
    };
    this.#emit({ type: "activity-updated", turnId: turn.turnId, activity });
    return id;
  }

  usage(turn: KitTurn, usage: TokenUsage): void {
    if (this.#active !== turn) return;
    this.#armIdleWatch(turn);
    const { state, update } = reduceSessionUsage(this.#usage, { type: "reported", turnId: turn.turnId, usage });
    this.#usage = state;
    if (update !== undefined) this.#usageUpdates.push(update);
  }

  complete(turn: KitTurn, text: string | undefined): void {
    if (this.#active !== turn) return;
    if (text !== undefined || this.#message !== undefined) this.message(turn, text);
    this.#finish(turn, { ok: true });
  }

  fail(turn: KitTurn, error: PedelecError): void {
    if (this.#active !== turn) return;
    this.#finish(turn, { ok: false, error });
  }

  async callTool(turn: KitTurn, toolName: string, args: unknown, options: ScriptedToolCallOptions): Promise<JsonValue> {
    if (this.#active !== turn) throw turn.stopReason;
    const tool = this.setup.tools.find((candidate) => candidate.name === toolName);
    if (tool === undefined) {
      const known = this.setup.tools.length > 0 ? this.setup.tools.map((candidate) => candidate.name).join(", ") : "none";
      throw new PedelecError("TOOL_NOT_FOUND", `no tool named ${toolName} in this thread (tools: ${known})`);
    }
    if (options.checkArgs !== false) this.#checkArgs(tool, args);
    const timeoutMs = options.timeoutMs ?? Math.min(tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS, this.setup.toolTimeoutMs);
    const call: PendingToolCall = {
      turnId: turn.turnId,
      toolRequestId: this.setup.nextId("tool-call"),
      toolName,
      args: args as JsonValue,
      timeoutMs,
    };
    // Checked before the call counts as made: arguments that are not JSON never reach the page.
    this.#check({ type: "tool-call-requested", ...call });
    const record: TestKitToolCall = {
      sessionId: this.id,
      turnId: turn.turnId,
      toolRequestId: call.toolRequestId,
      toolName,
      args: jsonCopy(call.args),
      timeoutMs,
      outcome: "pending",
      claimedBy: undefined,
      answer: undefined,
    };
    this.setup.recordToolCall(record);
    const settlement = new Promise<Settlement>((resolve) => {
      const pending: PendingCall = { call, turn, record, claimant: undefined, cancelTimer: () => undefined, resolve };
      this.#pending.set(call.toolRequestId, pending);
      pending.cancelTimer = this.setup.timers.after(timeoutMs, () => {
        this.#settle(pending, { outcome: "timed-out", error: this.#timeoutError(pending) });
      });
    });
    this.#pauseIdleWatch();
    this.#emit({ type: "tool-call-requested", ...call });
    this.#setStatus("waiting_tool_result", turn.turnId);
    const settled = await settlement;
    if (settled.outcome !== "answered") throw settled.error;
    if (!settled.answer.ok) throw PedelecError.fromWire(settled.answer.error);
    return settled.answer.result;
  }

  /** The desktop checks a call's arguments against the tool's schema before any page sees the call. */
  #checkArgs(tool: ToolManifestEntry, args: unknown): void {
    let checker = this.#argsCheckers.get(tool.name);
    if (checker === undefined) {
      checker = argsSchemaChecker(tool.argsSchema);
      this.#argsCheckers.set(tool.name, checker);
    }
    const problems = checker(args).map((issue) => `${jsonPointer(issue.path)} ${issue.message}`);
    if (problems.length === 0) return;
    const shown = problems.slice(0, REPORTED_PROBLEMS);
    const more = problems.length > shown.length ? ` (and ${problems.length - shown.length} more)` : "";
    throw new PedelecError(
      "TOOL_ARGS_INVALID",
      `arguments for ${tool.name} do not match its schema: ${shown.join("; ")}${more}. Run tool-spec ${tool.name} to see the schema.`,
      { problems: shown, problemCount: problems.length },
    );
  }

  #begin(turn: KitTurn): void {
    if (this.#active !== turn) return;
    this.#emit({ type: "turn-started", turnId: turn.turnId, turnKind: turn.kind });
    this.#setStatus("running", turn.turnId);
    this.#armIdleWatch(turn);
    this.setup.runAgent(turn);
  }

  /**
   * Ends the active turn: its tool calls settle, then (unless the desktop is gone) the status it leaves and its end
   * event go out, in Core's order, and the script learns the turn is over.
   */
  #finish(turn: KitTurn, end: ScriptedTurnEnd): void {
    if (this.#active !== turn) return;
    this.#pauseIdleWatch();
    const stopError = end.ok ? new PedelecError("TURN_CANCELLED", "the turn is over") : end.error;
    const outcome = stopError.code === "CORE_RUNTIME_UNAVAILABLE" ? "abandoned" : "cancelled";
    for (const pending of [...this.#pending.values()]) {
      if (pending.turn === turn) this.#settle(pending, { outcome, error: stopError });
    }
    this.#active = undefined;
    this.#message = undefined;
    if (this.#coreUp) {
      if (end.ok) {
        this.#setStatus("idle", turn.turnId);
        this.#emit({ type: "turn-completed", turnId: turn.turnId, turnKind: turn.kind });
      } else {
        if (!this.#ended) this.#setStatus(end.error.code === "TURN_CANCELLED" ? "idle" : "error", turn.turnId);
        this.#emit({ type: "turn-failed", turnId: turn.turnId, turnKind: turn.kind, error: end.error.toWire() });
      }
    } else {
      this.#deltas.discard();
      this.#usageUpdates.discard();
    }
    turn.settle(end);
  }

  #settle(pending: PendingCall, settlement: Settlement): void {
    const { toolRequestId } = pending.call;
    if (this.#pending.get(toolRequestId) !== pending) return;
    this.#pending.delete(toolRequestId);
    this.#settled.remember(toolRequestId, settlement.outcome);
    pending.cancelTimer();
    pending.record.outcome = settlement.outcome;
    if (settlement.outcome === "answered") pending.record.answer = jsonCopy(settlement.answer);
    if (this.#coreUp) {
      this.#emit({ type: "tool-call-settled", turnId: pending.call.turnId, toolRequestId, outcome: settlement.outcome });
      // The turn goes on after an answer or a timeout; a call settled because its turn is ending changes nothing more.
      const turn = pending.turn;
      const turnGoesOn = settlement.outcome === "answered" || settlement.outcome === "timed-out";
      if (turnGoesOn && this.#active === turn && this.#pending.size === 0) {
        this.#setStatus("running", turn.turnId);
        this.#armIdleWatch(turn);
      }
    }
    pending.resolve(settlement);
  }

  #timeoutError(pending: PendingCall): PedelecError {
    const { toolName, timeoutMs } = pending.call;
    const followers = this.setup.followers();
    const why =
      pending.claimant !== undefined
        ? `${this.setup.pageOf(pending.claimant)} claimed the call but never submitted a result`
        : followers === 0
          ? "no page follows the session"
          : `none of the ${followers} page(s) following the session claimed it (is a handler registered for ${toolName}?)`;
    return new PedelecError("TOOL_TIMEOUT", `the application did not answer ${toolName} within ${timeoutMs} ms: ${why}`, {
      toolRequestId: pending.call.toolRequestId,
    });
  }

  #requirePending(toolRequestId: string): PendingCall {
    const pending = this.#pending.get(toolRequestId);
    if (pending !== undefined) return pending;
    throw this.#settled.notPending(toolRequestId);
  }


  #requireCore(): void {
    if (!this.#coreUp) throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", "Pedelec Core is not running");
  }

  #requireOpen(): void {
    this.#requireCore();
    if (this.#ended) throw new PedelecError("SESSION_ENDED", `session ${this.id} has ended`);
  }

  /** A silent agent script is treated as a hung provider; tool waits do not count. */
  #armIdleWatch(turn: KitTurn): void {
    this.#pauseIdleWatch();
    if (this.#pending.size > 0) return;
    const timeoutMs = this.setup.agentIdleTimeoutMs;
    this.#cancelIdleWatch = this.setup.timers.after(timeoutMs, () => {
      this.#cancelIdleWatch = undefined;
      const message = turn.taken
        ? `the agent script did nothing for ${timeoutMs} ms and was stopped`
        : `no agent script took turn ${turn.turnId} within ${timeoutMs} ms: register kit.agent.onTurn(…) or await kit.agent.nextTurn()`;
      this.#finish(turn, { ok: false, error: new PedelecError("PROVIDER_FAILED", message) });
    });
  }

  #pauseIdleWatch(): void {
    this.#cancelIdleWatch?.();
    this.#cancelIdleWatch = undefined;
  }

  #setStatus(status: SessionStatus, turnId?: string): void {
    if (this.#status === status) return;
    this.#status = status;
    this.#emit(turnId === undefined ? { type: "status-changed", status } : { type: "status-changed", status, turnId });
  }

  #emit(event: SessionEvent): void {
    // Nothing may overtake a delta or a usage update that is waiting to be joined.
    this.#deltas.flush();
    this.#usageUpdates.flush();
    this.#emitEnvelope(event);
  }

  #emitEnvelope(event: SessionEvent): void {
    const envelope = this.#check(event);
    this.#seq = envelope.seq;
    this.#kept.push(envelope);
    this.setup.publish(envelope);
  }

  /** The envelope `event` would go out in, checked against the protocol; throws when it breaks it. */
  #check(event: SessionEvent): SessionEventEnvelope {
    const envelope: SessionEventEnvelope = { type: "event", sessionId: this.id, seq: this.#seq + 1, emittedAt: new Date().toISOString(), event };
    const parsed = sessionEventEnvelopeSchema.safeParse(envelope);
    if (!parsed.success) {
      throw new Error(`The test kit refused to send a ${event.type} event that breaks the protocol: ${summarizeIssues(parsed.error.issues).message}`);
    }
    return envelope;
  }
}

/** Where a problem is, as Core's checker writes it: a JSON Pointer, or "(root)" for the arguments themselves. */
function jsonPointer(path: readonly (string | number)[]): string {
  if (path.length === 0) return "(root)";
  return path.map((segment) => `/${String(segment).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
