import { z } from "zod";
import { SESSION_ID_PATTERN, SESSION_ID_RULE } from "./thread-access.js";

/** The agent backends a session can use. */
export const PROVIDER_CODES = ["codex", "antigravity", "opencode", "cursor", "claude", "ollama"] as const;
export const providerCodeSchema = z.enum(PROVIDER_CODES);
export type ProviderCode = z.infer<typeof providerCodeSchema>;

/** How each provider is called in messages and lists. */
export const PROVIDER_NAMES: Readonly<Record<ProviderCode, string>> = {
  codex: "Codex",
  antigravity: "Antigravity",
  opencode: "OpenCode",
  cursor: "Cursor",
  claude: "Claude Code",
  ollama: "Ollama",
};

/**
 * Whether a provider's session needs a model to start: true where the provider has no default model of its own to fall
 * back on (Pedelec's own agent asks an endpoint for one by name). Core and the testing kit refuse such a session without
 * one with MODEL_REQUIRED.
 */
export const PROVIDER_REQUIRES_MODEL: Readonly<Record<ProviderCode, boolean>> = {
  codex: false,
  antigravity: false,
  opencode: false,
  cursor: false,
  claude: false,
  ollama: true,
};

/** Where a provider comes in lists of what to install (`pedelec doctor`): the most likely installed first, from 0. */
export const PROVIDER_INSTALL_HINT_RANK: Readonly<Record<ProviderCode, number>> = {
  claude: 0,
  codex: 1,
  opencode: 2,
  cursor: 3,
  antigravity: 4,
  ollama: 5,
};

export const EFFORT_LEVELS = ["low", "medium", "high"] as const;
export const effortLevelSchema = z.enum(EFFORT_LEVELS);
export type EffortLevel = z.infer<typeof effortLevelSchema>;

/**
 * An explicit effort a page names with its model (`createSession({ provider, model, effort })`), in place of an effort
 * profile: each provider maps it to its CLI's own knob and refuses a level the CLI has not (EFFORT_NOT_SUPPORTED).
 */
export const EXPLICIT_EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;
export const explicitEffortSchema = z.enum(EXPLICIT_EFFORTS);
export type ExplicitEffort = z.infer<typeof explicitEffortSchema>;

/**
 * Session status machine: idle ⇄ running ⇄ waiting_tool_result, → error (recoverable), → ended (final). The transition
 * table is SESSION_TRANSITIONS (session-transitions.ts), driven by the session machine (session-machine.ts).
 */
export const SESSION_STATUSES = ["idle", "running", "waiting_tool_result", "ended", "error"] as const;
export const sessionStatusSchema = z.enum(SESSION_STATUSES);
export type SessionStatus = z.infer<typeof sessionStatusSchema>;

export const accessModeSchema = z.enum(["sandbox", "full"]);
export type AccessMode = z.infer<typeof accessModeSchema>;

export const turnKindSchema = z.enum(["user", "prepare"]);
export type TurnKind = z.infer<typeof turnKindSchema>;

/** Session ids double as thread ids (workspace folder names, `--thread-id`), so they are path-safe. */
export const sessionIdSchema = z.string().regex(SESSION_ID_PATTERN, SESSION_ID_RULE);

/** Turn ids are chosen by the SDK; opaque, path-safe and short. */
export const turnIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1–128 letters, digits, '_' or '-'");

export const toolRequestIdSchema = z.string().min(1).max(128);

/** A JSON value (what tool args and tool results must be). */
export const jsonValueSchema = z.json();
export type JsonValue = z.infer<typeof jsonValueSchema>;
