import { EFFORT_LEVELS, PROVIDER_CODES, effortLevelSchema, providerCodeSchema, type ProviderCode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { RESOURCE_LIMIT_BOUNDS, RESOURCE_LIMIT_NAMES, limitSettingKey, type ResourceLimitName } from "@pedelec/protocol/resource-limits";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import {
  loadSettings,
  MAX_MODEL_RESPONSE_TIMEOUT_SECONDS,
  MIN_MODEL_RESPONSE_TIMEOUT_SECONDS,
  updateSettingsFile,
  type Settings,
} from "./settings.js";
import { providerConfigKeys } from "./providers/provider-settings.js";
import { isAbsolute } from "node:path";

/** The keys of the providers' own settings sections (`ollama.baseUrl`, …), as their folders declare them. */
const PROVIDER_CONFIG_KEYS = providerConfigKeys();

/**
 * The settings a user edits one key at a time, with `pedelec config` or the control panel: as `a.b.c` paths into
 * settings.json.
 */
export const CONFIG_KEYS = [
  "defaultProvider",
  "defaultEffortLevel",
  ...PROVIDER_CODES.map((code) => `defaultModels.${code}`),
  ...PROVIDER_CODES.flatMap((code) => EFFORT_LEVELS.map((level) => `effortProfiles.${code}.${level}`)),
  ...PROVIDER_CODES.map((code) => `providers.${code}.path`),
  ...PROVIDER_CONFIG_KEYS.map(({ key }) => key),
  "sessionRetentionDays",
  "modelResponseTimeoutSeconds",
  ...RESOURCE_LIMIT_NAMES.map(limitSettingKey),
  "logging.debug",
];

/** What an unknown key's error lists: every key, with the per-provider ones folded. */
const KNOWN_KEYS_TEXT =
  "defaultProvider, defaultEffortLevel, defaultModels.<provider>, effortProfiles.<provider>.<low|medium|high>, providers.<provider>.path, " +
  `${PROVIDER_CONFIG_KEYS.map(({ key }) => `${key}, `).join("")}sessionRetentionDays, modelResponseTimeoutSeconds, ` +
  `${RESOURCE_LIMIT_NAMES.map(limitSettingKey).join(", ")}, logging.debug`;

/**
 * Keys whose values are secrets: `config get` shows only whether they are set, and `pedelec config set <key> -` reads
 * them from stdin (a hidden prompt on a terminal), so they need not go on a command line.
 */
export const SECRET_CONFIG_KEYS: readonly string[] = PROVIDER_CONFIG_KEYS.filter(({ setting }) => setting.secret !== undefined).map(({ key }) => key);

/** What `config get` shows for a secret: whether it is set, never the value. */
const SECRET_SET = "(set)";

/** Every key with its value in force: a configured effort profile, or the provider's default one. */
export function configValues(settings: Settings, providers: ProviderRegistry): Record<string, unknown> {
  const values: Record<string, unknown> = {
    defaultProvider: settings.defaultProvider,
    defaultEffortLevel: settings.defaultEffortLevel,
  };
  for (const code of PROVIDER_CODES) values[`defaultModels.${code}`] = settings.defaultModels[code] ?? null;
  for (const code of PROVIDER_CODES) {
    const defaults = providers.get(code)?.defaultEffortProfiles();
    for (const level of EFFORT_LEVELS)
      values[`effortProfiles.${code}.${level}`] = settings.effortProfiles[code]?.[level] ?? defaults?.[level] ?? null;
  }
  for (const code of PROVIDER_CODES) values[`providers.${code}.path`] = settings.providers[code]?.path ?? null;
  for (const { key, code, field, setting } of PROVIDER_CONFIG_KEYS) {
    const value = objectAt(settings, code)[field];
    values[key] = setting.secret !== undefined ? (value === "" || value === undefined ? null : SECRET_SET) : value;
  }
  values.sessionRetentionDays = settings.sessionRetentionDays;
  values.modelResponseTimeoutSeconds = settings.modelResponseTimeoutSeconds;
  for (const name of RESOURCE_LIMIT_NAMES) values[limitSettingKey(name)] = settings.limits[name];
  values["logging.debug"] = settings.logging.debug;
  return values;
}

export async function readConfig(settingsFile: string, providers: ProviderRegistry): Promise<Record<string, unknown>> {
  return configValues(await loadSettings(settingsFile), providers);
}

/**
 * Sets one key, validated exactly as Core validates it (effort profiles by the provider's own rules), and writes
 * settings.json atomically; a refused value leaves the file as it was. A running Core uses it from its next session. `value` is the command-line text: a provider code or `null`, an effort level, a model
 * name (empty to unset), a JSON array of argv tokens, or an absolute path (empty to unset).
 */
export async function setConfig(settingsFile: string, providers: ProviderRegistry, key: string, value: string): Promise<void> {
  if (!CONFIG_KEYS.includes(key)) {
    throw new PedelecError("INVALID_INPUT", `unknown key ${JSON.stringify(key)}; known keys: ${KNOWN_KEYS_TEXT}`);
  }
  const [section, code, level] = key.split(".") as [string, ProviderCode | undefined, string | undefined];
  const providerKey = PROVIDER_CONFIG_KEYS.find((entry) => entry.key === key);
  await updateSettingsFile(settingsFile, (raw) => {
    // A provider's own key: its folder checks the value and says what to store.
    if (providerKey !== undefined) {
      const { code: provider, field, setting } = providerKey;
      return { ...raw, [provider]: { ...objectAt(raw, provider), [field]: setting.parse(value) } };
    }
    switch (section) {
      case "defaultProvider": {
        if (value === "null" || value === "") return { ...raw, defaultProvider: null };
        const parsed = providerCodeSchema.safeParse(value);
        if (!parsed.success) throw new PedelecError("INVALID_INPUT", `defaultProvider must be one of ${PROVIDER_CODES.join(", ")} or null`);
        return { ...raw, defaultProvider: parsed.data };
      }
      case "defaultEffortLevel": {
        const parsed = effortLevelSchema.safeParse(value);
        if (!parsed.success) throw new PedelecError("INVALID_INPUT", `defaultEffortLevel must be one of ${EFFORT_LEVELS.join(", ")}`);
        return { ...raw, defaultEffortLevel: parsed.data };
      }
      case "sessionRetentionDays": {
        // The same bounds Core's settings schema applies; empty goes back to the default.
        if (value === "") return withEntry(raw, "sessionRetentionDays", undefined);
        const days = Number(value);
        if (!Number.isFinite(days) || days < 0.001 || days > 3650) {
          throw new PedelecError("INVALID_INPUT", "sessionRetentionDays must be a number of days from 0.001 to 3650");
        }
        return { ...raw, sessionRetentionDays: days };
      }
      case "modelResponseTimeoutSeconds": {
        if (value === "") return withEntry(raw, "modelResponseTimeoutSeconds", undefined);
        const seconds = Number(value);
        if (!Number.isInteger(seconds) || seconds < MIN_MODEL_RESPONSE_TIMEOUT_SECONDS || seconds > MAX_MODEL_RESPONSE_TIMEOUT_SECONDS) {
          throw new PedelecError(
            "INVALID_INPUT",
            `modelResponseTimeoutSeconds must be a whole number of seconds from ${MIN_MODEL_RESPONSE_TIMEOUT_SECONDS} to ${MAX_MODEL_RESPONSE_TIMEOUT_SECONDS}`,
          );
        }
        return { ...raw, modelResponseTimeoutSeconds: seconds };
      }
      case "limits": {
        const name = code as unknown as ResourceLimitName;
        return { ...raw, limits: withEntry(raw.limits, name, value === "" ? undefined : limitValue(name, value)) };
      }
      case "logging": {
        // Empty goes back to the default (off).
        if (value !== "" && value !== "true" && value !== "false") throw new PedelecError("INVALID_INPUT", "logging.debug must be true or false");
        return { ...raw, logging: withEntry(raw.logging, "debug", value === "" ? undefined : value === "true") };
      }
      case "defaultModels":
        return { ...raw, defaultModels: withEntry(raw.defaultModels, code!, value === "" ? undefined : value) };
      case "effortProfiles": {
        // Empty goes back to the provider's default profile for that level.
        const profiles = withEntry(
          objectAt(raw, "effortProfiles")[code!],
          level!,
          value === "" ? undefined : effortTokens(providers, code!, level!, value),
        );
        return { ...raw, effortProfiles: withEntry(raw.effortProfiles, code!, Object.keys(profiles).length === 0 ? undefined : profiles) };
      }
      default: {
        if (value !== "" && !isAbsolute(value)) throw new PedelecError("INVALID_INPUT", `${key} must be an absolute path`);
        return { ...raw, providers: withEntry(raw.providers, code!, value === "" ? undefined : { ...objectAt(raw.providers, code!), path: value }) };
      }
    }
  });
}

const BYTE_UNITS: Readonly<Record<string, number>> = { b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/**
 * A limit's value as typed: a whole number, and for the byte limits optionally a binary unit (`512MiB`, `2 GiB`), so
 * nobody has to count the zeros of 2147483648.
 */
export function limitValue(name: ResourceLimitName, value: string): number {
  const { min, max } = RESOURCE_LIMIT_BOUNDS[name];
  const bytes = name !== "liveSessionsPerOrigin";
  const match = /^(\d+)\s*([a-z]*)$/i.exec(value.trim());
  const factor = match === null ? undefined : match[2] === "" ? 1 : bytes ? BYTE_UNITS[match[2]!.toLowerCase()] : undefined;
  const number = match === null || factor === undefined ? Number.NaN : Number(match[1]) * factor;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    const range = bytes ? `a number of bytes (units B, KiB, MiB, GiB, TiB allowed) from ${min} to ${max}` : `a whole number from ${min} to ${max}`;
    throw new PedelecError("INVALID_INPUT", `${limitSettingKey(name)} must be ${range}`);
  }
  return number;
}

function effortTokens(providers: ProviderRegistry, code: ProviderCode, level: string, value: string): readonly string[] {
  const adapter = providers.get(code);
  if (!adapter) throw new PedelecError("EFFORT_PROFILE_INVALID", `the ${code} provider is not supported by this version of Pedelec`);
  let tokens: unknown;
  try {
    tokens = JSON.parse(value);
  } catch {
    throw new PedelecError("EFFORT_PROFILE_INVALID", `effortProfiles.${code}.${level} must be a JSON array of strings, like '["--effort","high"]'`);
  }
  if (!Array.isArray(tokens) || !tokens.every((token) => typeof token === "string")) {
    throw new PedelecError("EFFORT_PROFILE_INVALID", `effortProfiles.${code}.${level} must be a JSON array of strings`);
  }
  return adapter.validateEffortArgv(tokens as string[], `effort profile ${code}/${level}`);
}

function objectAt(value: unknown, key: string): Record<string, unknown> {
  const entry = isRecord(value) ? value[key] : undefined;
  return isRecord(entry) ? entry : {};
}

function withEntry(value: unknown, key: string, entry: unknown): Record<string, unknown> {
  const copy = { ...(isRecord(value) ? value : {}) };
  if (entry === undefined) delete copy[key];
  else copy[key] = entry;
  return copy;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
