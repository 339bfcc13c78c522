// One session of the stand-in desktop runtime: like Core's Session (packages/core/src/session.ts), a shell around the
// session machine (@pedelec/protocol/session-machine), which owns the status, the event sequence, the active turn
// and the tool calls of that turn with their claims. This shell runs the scripted agent, the kit's timers and the
// joining of deltas. Every event is checked against the protocol's envelope schema before it takes a seq.
import type { AccessMode, EffortLevel, ExplicitEffort, ProviderCode, SessionStatus, TurnKind } from "@pedelec/protocol/domain";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { MAX_ARTIFACTS_PER_TURN, type Artifact } from "@pedelec/protocol/artifacts";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { SessionDriver } from "@pedelec/protocol/session-driver";
import { sessionMachineState, type PublishedSessionEvent, type ToolCallSettling } from "@pedelec/protocol/session-machine";
import { reduceSessionUsage, sessionUsageState, sessionUsageTotal, type SessionUsageState } from "@pedelec/protocol/session-usage";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
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
  effortLevel: EffortLevel | null;
  effort: ExplicitEffort | null;
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

type Settlement = { outcome: "answered"; answer: ToolResultOutcome } | { outcome: "timed-out" | "cancelled" | "abandoned"; error: PedelecError };

/** An agent's tool call waiting for a page: its timer, its record, and how to wake the script. */
interface ToolWait {
  readonly call: PendingToolCall;
  readonly turn: KitTurn;
  readonly record: TestKitToolCall;
  cancelTimer: () => void;
  resolve: (settlement: Settlement) => void;
}

/** How many argument problems a TOOL_ARGS_INVALID message names; the rest are only counted, as Core does. */
const REPORTED_PROBLEMS = 3;

export class StandInSession implements TurnDriver {
  readonly setup: StandInSessionSetup;
  readonly createdAt = new Date().toISOString();
  /** The session machine, and the joining of deltas and usage updates around it (one tick, as Core joins one frame). */
  readonly #driver: SessionDriver<SessionEventEnvelope>;
  readonly #kept: SessionEventEnvelope[] = [];
  /** The running turn, as the agent script holds it; the machine knows it by its id. */
  #active: KitTurn | undefined;
  /** The desktop runtime is up; while it is not, nothing is emitted and the running turn is gone. */
  #coreUp = true;
  /** The turn that ran when the desktop was killed: failed once it is back, as a restarted Core does. */
  #interrupted: { turnId: string; turnKind: TurnKind } | undefined;
  readonly #waits = new Map<string, ToolWait>();
  /** The assistant message the active turn is writing. */
  #message: { id: string; text: string } | undefined;
  /** The tokens used, kept as Core keeps them (session-usage.ts). */
  #usage: SessionUsageState = sessionUsageState();
  /** What the active turn's script said it wrote into the assets folder, by path, in the order reported. */
  readonly #artifacts = new Map<string, Artifact>();
  /** The session's total in the newest usage update sent: what Core's store holds, so all a killed desktop leaves. */
  #sentUsage: TokenUsage = {};
  #cancelIdleWatch: (() => void) | undefined;
  /** Each tool's argument check, built on its first call. */
  readonly #argsCheckers = new Map<string, (args: unknown) => ArgsIssue[]>();

  constructor(setup: StandInSessionSetup) {
    this.setup = setup;
    this.#driver = new SessionDriver({
      state: sessionMachineState({ sessionId: setup.sessionId }),
      later: (callback) => queueMicrotask(callback),
      seal: (seq, event) => this.#envelope(seq, event),
      send: (envelope) => {
        this.#kept.push(envelope);
        setup.publish(envelope);
      },
      mayJoin: () => this.#coreUp,
      onUsageSent: (update) => {
        this.#sentUsage = update.sessionUsage;
      },
    });
  }

  get id(): string {
    return this.setup.sessionId;
  }

  get ended(): boolean {
    return this.#driver.state.ended;
  }

  get status(): SessionStatus {
    return this.#driver.state.status;
  }

  info(): SessionInfo {
    const { setup } = this;
    return {
      sessionId: setup.sessionId,
      provider: setup.provider,
      effortLevel: setup.effortLevel,
      effort: setup.effort,
      model: setup.model,
      sessionCreatedAt: this.createdAt,
      workspace: { ...setup.workspace },
      access: setup.access,
      autoEndOnDisconnect: setup.autoEndOnDisconnect,
      toolNames: setup.tools.map((tool) => tool.name),
      ...this.#driver.infoFields(),
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
    // What the agent script learns of the session is how it was before the turn.
    const session = this.info();
    const isFirstTurn = !this.#driver.state.hadTurn;
    // As Core: a turn id started before (a request sent again after a lost link) starts nothing.
    if (this.#driver.apply({ type: "turn-requested", turnId, turnKind: kind }) !== "accepted") return () => undefined;
    return this.#accepted({ turnId, kind, text, session, isFirstTurn });
  }

  /** Starts a hidden prepare turn, or answers null when there is nothing to prepare. */
  prepare(turnId: string): { turnId: string | null; begin?: () => void } {
    this.#requireCore();
    const session = this.info();
    const outcome = this.#driver.apply({ type: "turn-requested", turnId, turnKind: "prepare", canPrepare: this.setup.prepareTurns });
    if (outcome === "started-before") return { turnId };
    if (outcome === "nothing-to-prepare") return { turnId: null };
    return { turnId, begin: this.#accepted({ turnId, kind: "prepare", text: PREPARE_TEXT, session, isFirstTurn: true }) };
  }

  /** The turn the machine accepted, handed to the agent script; the returned function begins it. */
  #accepted(turn: { turnId: string; kind: TurnKind; text: string; session: SessionInfo; isFirstTurn: boolean }): () => void {
    const kitTurn = new KitTurn({ ...turn, guidance: this.setup.guidance, tools: this.setup.tools.map((tool) => jsonCopy(tool)) }, this);
    this.#active = kitTurn;
    return () => this.#begin(kitTurn);
  }

  /** Stops the running turn (TURN_CANCELLED); false when none was running. */
  cancelTurn(): boolean {
    this.#requireCore();
    const turn = this.#active;
    if (turn === undefined || this.#driver.state.ended) return false;
    this.#finish(turn, { ok: false, error: new PedelecError("TURN_CANCELLED", "the turn was cancelled") });
    return true;
  }

  end(reason: SessionEndReason): boolean {
    if (this.#driver.state.ended) return false;
    this.#requireCore();
    this.#driver.apply({ type: "session-ending" });
    const turn = this.#active;
    if (turn !== undefined) {
      this.#finish(turn, { ok: false, error: new PedelecError("SESSION_ENDED", `session ${this.id} was ended during the turn`) });
    }
    this.#driver.apply({ type: "session-ended", reason });
    return true;
  }

  /** Exactly one page runs each call: true when the call is (or already was) `claimant`'s. */
  claimToolCall(toolRequestId: string, claimant: string): boolean {
    this.#requireCore();
    const claim = this.#driver.apply({ type: "tool-call-claimed", toolRequestId, claimant });
    const record = this.#waits.get(toolRequestId)?.record;
    if (claim === "claimed" && record !== undefined) record.claimedBy = this.setup.pageOf(claimant);
    return claim !== "held-by-another";
  }

  /** A page's answer, applied once. */
  submitToolResult(toolRequestId: string, answer: ToolResultOutcome, claimant: string | undefined): void {
    this.#requireCore();
    this.#settle(toolRequestId, { outcome: "answered", answer }, claimant);
  }

  /** A page went away: the calls it claimed and did not answer are requested again for the others. */
  releaseToolClaims(claimant: string): number {
    if (this.#driver.state.ended || !this.#coreUp) return 0;
    const released = this.#driver.apply({ type: "tool-claims-released", isGone: (gone) => gone === claimant }, (calls) => {
      for (const call of calls) {
        const record = this.#waits.get(call.toolRequestId)?.record;
        if (record !== undefined) record.claimedBy = undefined;
      }
    });
    return released.length;
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
    this.#driver.discardUsage();
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
    if (this.#driver.state.ended || interrupted === undefined) return;
    const error = new PedelecError("SESSION_ERROR", "Core stopped while this turn was running; send the message again to continue", {
      cause: "core-stopped",
    });
    this.#driver.apply({ type: "interrupted-turn-failed", ...interrupted, error: error.toWire() });
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
    this.#driver.pushDelta({ turnId: turn.turnId, messageId: this.#message.id, delta: text });
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
    if (update !== undefined) this.#driver.pushUsage(update);
  }

  artifact(turn: KitTurn, artifact: Artifact): void {
    if (this.#active !== turn) return;
    this.#armIdleWatch(turn);
    // Reported when the turn ends, as Core reports what the turn left in the assets folder.
    this.#artifacts.delete(artifact.path);
    this.#artifacts.set(artifact.path, artifact);
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
      const wait: ToolWait = { call, turn, record, cancelTimer: () => undefined, resolve };
      this.#waits.set(call.toolRequestId, wait);
      wait.cancelTimer = this.setup.timers.after(timeoutMs, () => {
        this.#settle(call.toolRequestId, { outcome: "timed-out", error: this.#timeoutError(call) });
      });
    });
    this.#pauseIdleWatch();
    this.#driver.apply({ type: "tool-call-requested", call });
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
    this.#driver.apply({ type: "turn-began", turnId: turn.turnId });
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
    const waits = [...this.#waits.values()].filter((wait) => wait.turn === turn);
    const artifacts = [...this.#artifacts.values()].slice(0, MAX_ARTIFACTS_PER_TURN);
    this.#artifacts.clear();
    if (this.#coreUp) {
      for (const artifact of artifacts) this.#emit({ type: "artifact-created", turnId: turn.turnId, artifact });
      // A call settled because its turn is ending changes nothing more.
      this.#driver.apply({ type: "turn-stopping", turnId: turn.turnId });
      for (const wait of waits) this.#settle(wait.call.toolRequestId, { outcome, error: stopError });
      this.#active = undefined;
      this.#message = undefined;
      this.#driver.apply(
        end.ok ? { type: "turn-ended", turnId: turn.turnId } : { type: "turn-ended", turnId: turn.turnId, error: end.error.toWire() },
      );
    } else {
      // The desktop is gone: its turn and calls vanish without a word.
      this.#driver.apply({ type: "core-lost", outcome });
      for (const wait of waits) this.#closeWait(wait, { outcome, error: stopError }).resolve({ outcome, error: stopError });
      this.#active = undefined;
      this.#message = undefined;
      this.#driver.discardJoined();
    }
    turn.settle(end);
  }

  /** The machine settles the call once (a refused answer throws, a late settlement does nothing); its script wakes. */
  #settle(toolRequestId: string, settlement: Settlement, claimant?: string): void {
    const wait = this.#waits.get(toolRequestId);
    const closeWait = (settling: ToolCallSettling): void => {
      if (settling !== "not-pending" && wait !== undefined) this.#closeWait(wait, settlement);
    };
    const settling =
      settlement.outcome === "answered"
        ? this.#driver.apply({ type: "tool-call-answered", toolRequestId, claimant }, closeWait)
        : this.#driver.apply({ type: "tool-call-settled", toolRequestId, outcome: settlement.outcome }, closeWait);
    if (settling === "not-pending" || wait === undefined) return;
    if (settling === "resumed") this.#armIdleWatch(wait.turn);
    wait.resolve(settlement);
  }

  /** The wait is over: its timer stops and its record says how it settled. */
  #closeWait(wait: ToolWait, settlement: Settlement): ToolWait {
    this.#waits.delete(wait.call.toolRequestId);
    wait.cancelTimer();
    wait.record.outcome = settlement.outcome;
    if (settlement.outcome === "answered") wait.record.answer = jsonCopy(settlement.answer);
    return wait;
  }

  #timeoutError(call: PendingToolCall): PedelecError {
    const { toolName, timeoutMs } = call;
    const followers = this.setup.followers();
    const claimant = this.#driver.state.toolCalls.waiting.find((entry) => entry.call.toolRequestId === call.toolRequestId)?.claimant;
    const why =
      claimant !== undefined
        ? `${this.setup.pageOf(claimant)} claimed the call but never submitted a result`
        : followers === 0
          ? "no page follows the session"
          : `none of the ${followers} page(s) following the session claimed it (is a handler registered for ${toolName}?)`;
    return new PedelecError("TOOL_TIMEOUT", `the application did not answer ${toolName} within ${timeoutMs} ms: ${why}`, {
      toolRequestId: call.toolRequestId,
    });
  }

  #requireCore(): void {
    if (!this.#coreUp) throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", "Pedelec Core is not running");
  }

  /** A silent agent script is treated as a hung provider; tool waits do not count. */
  #armIdleWatch(turn: KitTurn): void {
    this.#pauseIdleWatch();
    if (this.#driver.state.toolCalls.waiting.length > 0) return;
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

  #emit(event: PublishedSessionEvent): void {
    this.#driver.apply({ type: "event-published", event });
  }

  /** The envelope `event` would go out in next, checked against the protocol; throws when it breaks it. */
  #check(event: SessionEvent): SessionEventEnvelope {
    return this.#envelope(this.#driver.state.seq + 1, event);
  }

  #envelope(seq: number, event: SessionEvent): SessionEventEnvelope {
    const envelope: SessionEventEnvelope = { type: "event", sessionId: this.id, seq, emittedAt: new Date().toISOString(), event };
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
