import { readFile } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { z } from "zod";
import { effortLevelSchema, providerCodeSchema, type EffortLevel, type ProviderCode } from "@pedelec/protocol/domain";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { DEFAULT_RESOURCE_LIMITS, RESOURCE_LIMIT_BOUNDS, type ResourceLimitName } from "@pedelec/protocol/resource-limits";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { providerSettingsShape } from "./providers/provider-settings.js";
import { withoutJsonExcerpt } from "./logging/json-error-excerpt.js";
import { writePrivateFileAtomically } from "./private-file.js";

const effortProfilesSchema = z.partialRecord(effortLevelSchema, z.array(z.string()));

/** The layout version this Pedelec writes. A file without one is version 0, from before versions were recorded. */
export const SETTINGS_VERSION = 1;

/** Step n takes a file of version n to version n + 1; a new layout adds a step here. */
const MIGRATIONS: readonly ((raw: Record<string, unknown>) => Record<string, unknown>)[] = [
  // 0 → 1: the version is recorded; no key changed.
  (raw) => raw,
];

/** Brings a file's raw JSON up to SETTINGS_VERSION; a file from a newer Pedelec is refused, not guessed at. */
export function migrateSettings(raw: Record<string, unknown>, settingsFile: string): Record<string, unknown> {
  const version = raw.version ?? 0;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0) {
    throw new PedelecError("INVALID_INPUT", `${settingsFile}: "version" must be a whole number`);
  }
  if (version > SETTINGS_VERSION) {
    throw new PedelecError(
      "INVALID_INPUT",
      `${settingsFile} was written by a newer Pedelec (settings version ${version}; this one reads up to ${SETTINGS_VERSION})`,
    );
  }
  let migrated = raw;
  for (let step = version; step < SETTINGS_VERSION; step += 1) migrated = MIGRATIONS[step]!(migrated);
  return { ...migrated, version: SETTINGS_VERSION };
}

/** The layout of PEDELEC_HOME/settings.json (Core's own file, edited by the user or the control panel). */
export const MIN_MODEL_RESPONSE_TIMEOUT_SECONDS = 5;
export const MAX_MODEL_RESPONSE_TIMEOUT_SECONDS = 3600;

function limitSchema(name: ResourceLimitName) {
  const { min, max } = RESOURCE_LIMIT_BOUNDS[name];
  return z.number().int().min(min).max(max).default(DEFAULT_RESOURCE_LIMITS[name]);
}

export const settingsFileSchema = z.object({
  version: z.literal(SETTINGS_VERSION).default(SETTINGS_VERSION),
  defaultProvider: providerCodeSchema.nullable().default(null),
  defaultEffortLevel: effortLevelSchema.default("medium"),
  defaultModels: z.partialRecord(providerCodeSchema, z.string().min(1)).default({}),
  effortProfiles: z.partialRecord(providerCodeSchema, effortProfilesSchema).default({}),
  /**
   * Where each provider's executable lives, recorded by `pedelec install` from the terminal's PATH (or set by the
   * user): Core is often started by the browser, whose PATH may not reach the CLI. PEDELEC_PROVIDER_PATH still wins.
   */
  providers: z
    .partialRecord(providerCodeSchema, z.strictObject({ path: z.string().refine((path) => isAbsolute(path), "must be an absolute path") }))
    .default({}),
  /**
   * Each provider's own section, under its code, as its folder defines it (providers/provider-settings.ts): `ollama`,
   * the endpoint and key of Pedelec's own agent.
   */
  ...providerSettingsShape(),
  /** A provider silent this long (outside tool waits) is treated as hung. */
  providerIdleTimeoutMs: z
    .number()
    .int()
    .min(1000)
    .default(10 * 60_000),
  /**
   * How long a turn waits on the model: the time without progress (text, a message, a command or tool starting or
   * ending) while no command and no page tool call runs. Retry and reconnect notices are not progress, so a dead
   * endpoint ends the turn with PROVIDER_TIMEOUT within this bound (see ModelResponseWatch).
   */
  modelResponseTimeoutSeconds: z.number().int().min(MIN_MODEL_RESPONSE_TIMEOUT_SECONDS).max(MAX_MODEL_RESPONSE_TIMEOUT_SECONDS).default(120),
  /**
   * A running turn that no page follows any more (the browser or the native host went away) is stopped after this
   * long, unless a route comes back first (a reconnecting extension resubscribes).
   */
  unfollowedTurnGraceMs: z
    .number()
    .int()
    .min(0)
    .max(10 * 60_000)
    .default(3_000),
  /**
   * A session nobody used for this many days is ended (reason "expired") and its managed workspace removed. Until then it
   * survives page reloads, browser restarts and Core restarts.
   */
  sessionRetentionDays: z.number().min(0.001).max(3650).default(7),
  /**
   * What one approved origin may hold at once, and the free space uploads and scripts must leave (see
   * @pedelec/protocol/resource-limits). A running Core applies a change to the next request.
   */
  limits: z
    .object({
      liveSessionsPerOrigin: limitSchema("liveSessionsPerOrigin"),
      assetBytesPerSession: limitSchema("assetBytesPerSession"),
      assetBytesPerOrigin: limitSchema("assetBytesPerOrigin"),
      minFreeDiskBytes: limitSchema("minFreeDiskBytes"),
    })
    .prefault({}),
  /**
   * `debug: true` makes Core and the native host write debug lines and the log fields that may carry page content,
   * tool arguments and results, file contents or secrets, which are otherwise redacted (docs/architecture/logging.md).
   * For a user chasing a problem; a running Core follows a change from its next session.
   */
  logging: z.object({ debug: z.boolean().default(false) }).default({ debug: false }),
});
export type Settings = z.infer<typeof settingsFileSchema>;

export async function loadSettings(settingsFile: string): Promise<Settings> {
  let text: string;
  try {
    text = await readFile(settingsFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return settingsFileSchema.parse({});
    throw new PedelecError("INVALID_INPUT", `cannot read ${settingsFile}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    // Without V8's quote of the text around the mistake: it may hold the start of a secret (the Ollama API key).
    throw new PedelecError("INVALID_INPUT", `${settingsFile} is not valid JSON: ${withoutJsonExcerpt((error as Error).message)}`);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new PedelecError("INVALID_INPUT", `${settingsFile} must hold a JSON object`);
  }
  const parsed = settingsFileSchema.safeParse(migrateSettings(raw as Record<string, unknown>, settingsFile));
  if (!parsed.success) {
    const summary = summarizeIssues(parsed.error.issues);
    throw new PedelecError("INVALID_INPUT", `${settingsFile} is invalid: ${summary.message}`, summary.details);
  }
  return parsed.data;
}

export function configuredEffortArgv(settings: Settings, provider: ProviderCode, level: EffortLevel): string[] | undefined {
  return settings.effortProfiles[provider]?.[level];
}

/**
 * Changes settings.json atomically: the edit is applied to the file's raw JSON (so keys this version does not know
 * survive), checked against the schema, written to a temporary file, flushed, and renamed over the old file.
 */
export async function updateSettingsFile(settingsFile: string, change: (raw: Record<string, unknown>) => Record<string, unknown>): Promise<Settings> {
  let raw: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(await readFile(settingsFile, "utf8"));
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) raw = parsed as Record<string, unknown>;
    else throw new PedelecError("INVALID_INPUT", `${settingsFile} does not hold a JSON object; fix or remove it first`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw PedelecError.from(error, "INVALID_INPUT", `cannot read ${settingsFile}; fix or remove it first`);
    }
  }
  const next = change(migrateSettings(raw, settingsFile));
  const checked = settingsFileSchema.safeParse(next);
  if (!checked.success) throw new PedelecError("INVALID_INPUT", `the new settings are invalid`, checked.error.issues);
  try {
    await writePrivateFileAtomically(settingsFile, `${JSON.stringify(next, null, 2)}\n`);
  } catch (error) {
    throw PedelecError.from(error, "INVALID_INPUT", `cannot write ${settingsFile}`);
  }
  return checked.data;
}

/**
 * Core's view of settings.json: read afresh for every use, so edits apply to the next session without a restart. A
 * file that cannot be read or is invalid is reported (with its path and the problem) and the last good settings stay
 * in force, so one bad edit never takes Core down.
 */
export class SettingsSource {
  #lastGood: Settings = settingsFileSchema.parse({});
  #lastProblem: string | null = null;

  constructor(
    private readonly settingsFile: string,
    private readonly report: (problem: string) => void,
  ) {}

  async current(): Promise<Settings> {
    try {
      this.#lastGood = await loadSettings(this.settingsFile);
      this.#lastProblem = null;
    } catch (error) {
      const problem = `${(error as Error).message}; keeping the last good settings`;
      // Said once per distinct problem, not on every read.
      if (problem !== this.#lastProblem) this.report(problem);
      this.#lastProblem = problem;
    }
    return this.#lastGood;
  }
}
