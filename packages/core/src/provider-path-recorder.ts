import type { ProviderCode } from "@pedelec/protocol/domain";
import { findExecutable, providerSearchPath } from "./providers/provider-discovery.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { updateSettingsFile } from "./settings.js";

export interface RecordedProviderPath {
  provider: ProviderCode;
  path: string;
}

/**
 * Looks for each provider's executable the way the caller's terminal would (PEDELEC_PROVIDER_PATH, PATH, the usual
 * install folders) and records what it finds as `providers.<code>.path` in settings.json, so a Core started later by
 * the browser, with the browser's environment, still finds the same executables. Providers not found are left as they
 * were recorded before.
 */
export async function recordProviderPaths(
  settingsFile: string,
  providers: ProviderRegistry,
  env: Record<string, string | undefined>,
): Promise<RecordedProviderPath[]> {
  const searchDirs = providerSearchPath(env);
  const found: RecordedProviderPath[] = [];
  for (const provider of providers.supportedCodes()) {
    const adapter = providers.get(provider);
    if (!adapter) continue;
    const path = await findExecutable(adapter.programName, searchDirs);
    if (path !== null) found.push({ provider, path });
  }
  if (found.length === 0) return found;
  await updateSettingsFile(settingsFile, (raw) => {
    const recorded = { ...(isObject(raw.providers) ? raw.providers : {}) };
    for (const { provider, path } of found) recorded[provider] = { ...(isObject(recorded[provider]) ? recorded[provider] : {}), path };
    return { ...raw, providers: recorded };
  });
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
