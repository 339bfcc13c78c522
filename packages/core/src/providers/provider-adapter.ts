import type { AccessMode, EffortLevel, ExplicitEffort, ProviderCode } from "@pedelec/protocol/domain";
import type { Activity } from "@pedelec/protocol/session-events";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
import type { Settings } from "../settings.js";

/** What discovery found out about a provider on this machine. */
export interface ProviderDiscovery {
  available: boolean;
  /** Absolute path of the executable that was probed, when one was found. */
  executablePath: string | null;
  version: string | null;
  /** Human reason when unavailable: not installed / not on PATH / not signed in. */
  error: string | null;
  /**
   * True when the probe could not finish (no answer in time, cancelled, no process slot): a fact about this
   * machine's load at that moment, not about the provider, so it is worth asking again and never cached.
   */
  transient?: boolean;
}

/** Capabilities a provider lacks are visible here instead of being hidden behind flags; Core acts on each. */
export interface ProviderCapabilities {
  /**
   * Streams text deltas while a message is being written. Without them Core hands each completed message to pages
   * as one delta too, so an app written for deltas works with every provider.
   */
  textDeltas: boolean;
  /** Can continue an earlier conversation. Without it every turn starts a fresh one with the whole first prompt. */
  resume: boolean;
}

export interface ProviderTurnRequest {
  /** Absolute executable path from discovery. */
  executablePath: string;
  /** The whole prompt for this turn (written to stdin, or passed the way the CLI needs it). */
  prompt: string;
  /** Working directory of the provider process: the session's workspace. */
  workspacePath: string;
  /**
   * The provider's conversation to continue, or null to start a new one (the session's first turn, or a fresh start
   * after the provider lost the conversation). When null, `prompt` carries the whole first prompt.
   */
  providerSessionId: string | null;
  /**
   * The session's access mode. "sandbox": the CLI runs in its most restrictive mode that still lets the agent edit
   * the workspace and run pedelec-cli; "full": its permissive mode (only ever with the user's grant).
   */
  access: AccessMode;
  model: string | null;
  /** Argv tokens of the session's effort profile, validated and snapshotted at session creation. */
  effortArgv: readonly string[];
  /** Complete environment for the child process (Core adds PATH with pedelec-cli, PEDELEC_THREAD_ID, …). */
  env: Record<string, string>;
  /** The session's MCP server, for an adapter that registers it with its CLI (see ProviderAdapter.nativeToolName). */
  toolServer: SessionToolServer;
  /** Aborting kills the provider's whole process tree; runTurn then settles with the abort reason. */
  signal: AbortSignal;
  /**
   * The provider's own options for the session, as its adapter's `sessionOptions.read` made them (Pedelec's own agent:
   * the endpoint and key). Opaque to Core: the adapter that made them checks them again when it reads them.
   */
  providerOptions?: unknown;
  /**
   * Told the pid of each process the turn starts (each leads its own process group) and the tag its environment
   * carries (process-tag.ts), so Core can reap them, and what they started, later.
   */
  onProcessStarted?: (pid: number, processTag: string) => void;
}

/**
 * Pedelec's MCP server of one session (`pedelec-cli mcp`), as the stdio command a CLI starts under the server name
 * SESSION_TOOL_SERVER_NAME. It finds the session through `env`, never argv: a CLI that passes its MCP servers only the
 * variables it is told to (codex) must pass those in `envNames`.
 */
export interface SessionToolServer {
  command: string;
  args: readonly string[];
  envNames: readonly string[];
}

/** Normalized provider output, before Core stamps turn ids and seq numbers. */
export type ProviderEvent =
  | { type: "provider-session-started"; providerSessionId: string }
  | { type: "text-delta"; messageId: string; delta: string }
  | { type: "message-completed"; messageId: string; text: string }
  | {
      type: "activity";
      activity: Activity;
      /**
       * A notice about the provider rather than the model's work (a retry of a failed request, a reconnect): shown to
       * the page like any activity, but it is not the model's progress, so it does not hold off the response timeout.
       */
      notice?: boolean;
    }
  /**
   * Tokens the turn has used so far, as the provider reported them: cumulative within the turn (each report replaces
   * the turn's previous one), so a provider that reports per request or per step adds them up in its parser.
   */
  | { type: "usage"; usage: TokenUsage }
  /** Any output at all (also unparsed lines), so Core can tell a busy provider from a hung one. */
  | { type: "output-seen" };

export type ProviderTurnOutcome =
  | { ok: true }
  | {
      ok: false;
      error: PedelecError;
      /** The conversation the turn tried to continue no longer exists at the provider; a fresh one may be started. */
      conversationLost?: boolean;
    };

/** How a CLI is given an explicit effort level. */
export interface ExplicitEffortKnob {
  /** The levels the CLI has, in EXPLICIT_EFFORTS order; any other is EFFORT_NOT_SUPPORTED naming these. */
  readonly levels: readonly ExplicitEffort[];
  /** The argv that sets one of `levels`; checked like an effort profile. */
  argv(effort: ExplicitEffort): string[];
  /**
   * Where the levels also depend on the model (OpenCode's variants are the model's own): those of `levels` the
   * session's model has, asked at createSession within `signal`. Throws a coded error when the CLI cannot say.
   */
  modelLevels?(request: {
    executablePath: string;
    model: string;
    env: Record<string, string>;
    signal: AbortSignal;
  }): Promise<readonly ExplicitEffort[]>;
}

export interface ProviderAdapter {
  readonly code: ProviderCode;
  /** How the provider is called in messages: its PROVIDER_NAMES entry (a stand-in in a test may call itself otherwise). */
  readonly displayName: string;
  /** Executable name searched for on PEDELEC_PROVIDER_PATH, then PATH. */
  readonly programName: string;
  /**
   * Pedelec's own program rather than a vendor CLI: it is looked for only in PEDELEC_HOME/bin, where `pedelec install`
   * writes its launcher, never on PATH.
   */
  readonly bundled?: boolean;
  readonly capabilities: ProviderCapabilities;
  /**
   * Present when the adapter registers the session's MCP server with its CLI: page tools (and `run_script`) are then
   * the agent's own tools, a sandbox session grants no shell command, and the first prompt names each tool as the CLI
   * shows it to the model (Claude Code: `mcp__pedelec__add_todo`). Absent: the agent calls tools through pedelec-cli.
   */
  nativeToolName?(toolName: string): string;
  /** Effort profiles a fresh install starts with. */
  defaultEffortProfiles(): Record<EffortLevel, string[]>;
  /**
   * The CLI's own effort setting, for a page that names an explicit `effort` with its model. Absent: the CLI has none
   * (its model names carry the effort), and every explicit effort is EFFORT_NOT_SUPPORTED.
   */
  readonly explicitEffort?: ExplicitEffortKnob;
  /**
   * Checks an effort profile against this provider's own flags (those its adapter sets are refused, its effort knob
   * is allowed); EFFORT_PROFILE_INVALID otherwise. Returns the frozen tokens to snapshot.
   */
  validateEffortArgv(tokens: readonly string[], where: string): readonly string[];
  /** Probes the executable (e.g. `<bin> --version`). */
  discover(executablePath: string, signal: AbortSignal, env: Record<string, string>): Promise<ProviderDiscovery>;
  /**
   * Runs one turn: spawns the CLI in the workspace, streams normalized events to `onEvent`, and settles once
   * the process has exited and its output is drained. Never rejects: failures are outcomes with a coded error
   * (PROVIDER_FAILED with stderr, PROVIDER_NOT_AUTHENTICATED, PROVIDER_OUTPUT_INVALID, or the abort reason).
   */
  runTurn(request: ProviderTurnRequest, onEvent: (event: ProviderEvent) => void): Promise<ProviderTurnOutcome>;
  /**
   * Conversations Pedelec itself stores for this provider under PEDELEC_HOME (Pedelec's own agent keeps one file per
   * provider session id). Core removes a session's when the session ends, and in its retention sweep every one no open
   * session names. Absent for providers whose conversations live with their own CLI.
   */
  readonly storedConversations?: StoredConversations;
  /**
   * What a session of this provider takes from the settings besides the general ones, and how it is checked before the
   * session is made. Absent for providers that need nothing beyond the general turn request.
   */
  readonly sessionOptions?: ProviderSessionOptions;
  /**
   * Asked once discovery found the provider available: why it still cannot be used with these settings (Pedelec's own
   * agent: its endpoint does not answer, or lacks the default model), or null. Absent when discovery says it all.
   */
  readinessProblem?(settings: Settings): Promise<string | null>;
}

/**
 * The provider's own part of a session (the AI SDK's `providerOptions`): Core snapshots it without looking inside and
 * hands it back on every turn as `ProviderTurnRequest.providerOptions`.
 */
export interface ProviderSessionOptions {
  /** The options a session snapshots from the settings in force, unchecked: at creation, and again at restore. */
  read(settings: Settings): unknown;
  /**
   * At creation, before the executable is located: throws the coded reason the options cannot work (a missing key, a
   * malformed address), without I/O.
   */
  check(options: unknown): void;
  /**
   * At creation, once the executable is found: checks against the outside world (the endpoint has the model), bounded
   * by `signal`. Throws the coded reason.
   */
  prepare(request: { options: unknown; model: string | null; signal: AbortSignal }): Promise<void>;
}

/** The conversations a provider keeps under PEDELEC_HOME, keyed by provider session id. */
export interface StoredConversations {
  /** Removes one conversation; a missing one is fine. */
  remove(pedelecHome: string, providerSessionId: string): Promise<void>;
  /**
   * Removes every conversation not in `keep` last written before `modifiedBefore` (ms since the epoch); returns how many.
   */
  sweep(pedelecHome: string, keep: ReadonlySet<string>, modifiedBefore: number): Promise<number>;
}
