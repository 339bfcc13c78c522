import { EFFORT_LEVELS, PROVIDER_CODES, PROVIDER_NAMES } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { providerConfigKeys } from "../providers/provider-settings.js";
import type { ProviderRegistry } from "../providers/provider-registry.js";
import type { ProviderReport } from "../provider-status.js";
import { loadSettings, type Settings } from "../settings.js";
import { SECRET_CONFIG_KEYS, setConfig } from "../settings-keys.js";
import type { PanelProvider, PanelSecret, PanelSettingChange } from "./control-panel-wire.js";

/**
 * Applies one change from the Providers page as `pedelec config set` would (settings-keys.ts): checked as Core checks
 * it (an effort profile by its provider's own rules, EFFORT_PROFILE_INVALID with Core's message), written atomically,
 * the file left as it was when refused. A running Core reads the file afresh for every session, so the next session
 * uses the change.
 */
export async function applySettingChange(settingsFile: string, providers: ProviderRegistry, change: PanelSettingChange): Promise<Settings> {
  const [key, value] = configEntryOf(change);
  await setConfig(settingsFile, providers, key, value);
  return loadSettings(settingsFile);
}

/** The change as a settings key and the text `pedelec config set` takes for it. */
function configEntryOf(change: PanelSettingChange): [key: string, value: string] {
  switch (change.setting) {
    case "defaultProvider":
      return ["defaultProvider", change.value ?? "null"];
    case "defaultEffortLevel":
      return ["defaultEffortLevel", change.value];
    case "defaultModel":
      return [`defaultModels.${change.provider}`, change.value];
    case "effortProfile":
      return [`effortProfiles.${change.provider}.${change.level}`, change.tokens === null ? "" : JSON.stringify(change.tokens)];
    case "providerSecret":
      // Only a provider's secret: other keys have fields of their own, checked by their own schemas.
      if (!SECRET_CONFIG_KEYS.includes(change.key)) throw new PedelecError("INVALID_INPUT", `${change.key} is not a provider's secret setting`);
      return [change.key, change.value];
  }
}

/** Each provider's secret settings, whether set, never their values. */
export function panelSecrets(settings: Settings): PanelSecret[] {
  return providerConfigKeys().flatMap(({ key, code, field, setting }) =>
    setting.secret === undefined
      ? []
      : [{ key, provider: code, providerName: PROVIDER_NAMES[code], ...setting.secret, set: isSet(settings, code, field) }],
  );
}

/** Whether a provider's own setting (`settings.ollama.apiKey`) holds a value. */
function isSet(settings: Settings, code: string, field: string): boolean {
  const section: unknown = (settings as unknown as Record<string, unknown>)[code];
  const value = typeof section === "object" && section !== null ? (section as Record<string, unknown>)[field] : undefined;
  return value !== undefined && value !== "";
}

/** What the Providers page shows of each provider: its report and the profile in force at each level. */
export function panelProviders(reports: readonly ProviderReport[], settings: Settings, providers: ProviderRegistry): PanelProvider[] {
  return PROVIDER_CODES.map((code) => {
    const report = reports.find((candidate) => candidate.code === code);
    const defaults = providers.get(code)?.defaultEffortProfiles();
    const configured = settings.effortProfiles[code] ?? {};
    const effortProfiles = Object.fromEntries(
      EFFORT_LEVELS.map((level) => [level, { tokens: configured[level] ?? defaults?.[level] ?? [], configured: configured[level] !== undefined }]),
    ) as PanelProvider["effortProfiles"];
    return {
      code,
      name: report?.name ?? code,
      available: report?.available ?? false,
      error: report?.error ?? null,
      version: report?.version ?? null,
      executablePath: report?.executablePath ?? null,
      supported: defaults !== undefined,
      effortProfiles,
    };
  });
}
