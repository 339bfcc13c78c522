import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { isErrorCode } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { tokenUsageSchema } from "@pedelec/protocol/token-usage";
import { artifactKindOf, type Artifact } from "@pedelec/protocol/artifacts";
import { assetPathProblem } from "@pedelec/protocol/assets";
import type { JsonValue, TokenUsage, TurnKind } from "../types.js";
import type {
  ScriptedActivity,
  ScriptedArtifact,
  ScriptedToolCallOptions,
  ScriptedTurn,
  ScriptedTurnEnd,
  TestKitSessionInfo,
  TestKitTool,
} from "./types.js";

/** What a turn asks of the session it belongs to; every call is ignored once the turn is over. */
export interface TurnDriver {
  delta(turn: KitTurn, text: string): void;
  message(turn: KitTurn, text: string | undefined): string | undefined;
  activity(turn: KitTurn, activity: ScriptedActivity): string;
  usage(turn: KitTurn, usage: TokenUsage): void;
  artifact(turn: KitTurn, artifact: Artifact): void;
  callTool(turn: KitTurn, toolName: string, args: unknown, options: ScriptedToolCallOptions): Promise<JsonValue>;
  complete(turn: KitTurn, text: string | undefined): void;
  fail(turn: KitTurn, error: PedelecError): void;
}

export interface KitTurnInit {
  turnId: string;
  kind: TurnKind;
  text: string;
  session: TestKitSessionInfo;
  guidance: string;
  tools: readonly TestKitTool[];
  isFirstTurn: boolean;
}

/** One turn of the stand-in desktop, as the agent script sees it. */
export class KitTurn implements ScriptedTurn {
  readonly turnId: string;
  readonly kind: TurnKind;
  readonly text: string;
  readonly session: TestKitSessionInfo;
  readonly guidance: string;
  readonly tools: readonly TestKitTool[];
  readonly isFirstTurn: boolean;
  readonly finished: Promise<ScriptedTurnEnd>;
  /** Set once a script (an onTurn handler or a nextTurn() caller) has the turn. */
  taken = false;
  readonly #controller = new AbortController();
  readonly #driver: TurnDriver;
  #end: ScriptedTurnEnd | undefined;
  #resolveFinished!: (end: ScriptedTurnEnd) => void;

  constructor(init: KitTurnInit, driver: TurnDriver) {
    this.turnId = init.turnId;
    this.kind = init.kind;
    this.text = init.text;
    this.session = init.session;
    this.guidance = init.guidance;
    this.tools = init.tools;
    this.isFirstTurn = init.isFirstTurn;
    this.#driver = driver;
    this.finished = new Promise((resolve) => (this.#resolveFinished = resolve));
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get over(): boolean {
    return this.#end !== undefined;
  }

  /** Why the turn stopped, for a tool call made after it did. */
  get stopReason(): PedelecError {
    const reason: unknown = this.#controller.signal.reason;
    return reason instanceof PedelecError ? reason : new PedelecError("TURN_CANCELLED", `turn ${this.turnId} is over`);
  }

  delta(text: string): void {
    if (typeof text !== "string") throw new TypeError("turn.delta() takes a string");
    this.#driver.delta(this, text);
  }

  message(text?: string): string | undefined {
    if (text !== undefined && typeof text !== "string") throw new TypeError("turn.message() takes a string or nothing");
    return this.#driver.message(this, text);
  }

  activity(activity: string | ScriptedActivity): string {
    const input = typeof activity === "string" ? { title: activity } : activity;
    if (typeof input?.title !== "string") throw new TypeError("turn.activity() takes a title string or an activity with a title");
    return this.#driver.activity(this, input);
  }

  usage(usage: TokenUsage): void {
    // Checked here, where the script can see the mistake: a report that breaks the protocol never reaches the session.
    const parsed = tokenUsageSchema.strict().safeParse(usage);
    if (!parsed.success) {
      throw new TypeError(`turn.usage() takes counts that are non-negative integers: ${summarizeIssues(parsed.error.issues).message}`);
    }
    this.#driver.usage(this, parsed.data);
  }

  artifact(artifact: ScriptedArtifact): void {
    const path = artifact?.path;
    const problem = typeof path === "string" ? assetPathProblem(path) : "must be a string";
    if (problem !== null) throw new TypeError(`turn.artifact() takes an asset path: the path ${problem}`);
    const sizeBytes = artifact.sizeBytes ?? 0;
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0) throw new TypeError("turn.artifact() takes a sizeBytes that is a non-negative integer");
    const mediaType = artifact.mediaType ?? "application/octet-stream";
    this.#driver.artifact(this, { path: path!, kind: artifactKindOf(mediaType), sizeBytes, mediaType, modifiedAt: new Date().toISOString() });
  }

  callTool<TResult = JsonValue>(toolName: string, args: unknown = {}, options: ScriptedToolCallOptions = {}): Promise<TResult> {
    return this.#driver.callTool(this, toolName, args, options) as Promise<TResult>;
  }

  complete(text?: string): void {
    if (text !== undefined && typeof text !== "string") throw new TypeError("turn.complete() takes a string or nothing");
    this.#driver.complete(this, text);
  }

  fail(code: ErrorCode, message?: string, details?: unknown): void {
    if (!isErrorCode(code)) throw new TypeError(`turn.fail() needs an error code from the catalogue, got ${JSON.stringify(code)}`);
    this.#driver.fail(this, new PedelecError(code, message ?? `the agent failed the turn with ${code}`, details));
  }

  /** Aborts the turn's signal (the stop comes first, so a script reacting to it finds the turn over). */
  abort(reason: PedelecError): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  /** Marks the turn over; called once by the session. */
  settle(end: ScriptedTurnEnd): void {
    if (this.#end !== undefined) return;
    this.#end = end;
    this.abort(end.ok ? new PedelecError("TURN_CANCELLED", `turn ${this.turnId} is over`) : end.error);
    this.#resolveFinished(end);
  }
}
