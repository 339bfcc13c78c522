import type { ProviderCode } from "@pedelec/protocol/domain";
import { log } from "./logger.js";
import type { ProviderLocator } from "./provider-locator.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import type { Settings } from "./settings.js";
import { sharedToolArgsValidators, type ToolArgsValidators } from "./tool-args-validators.js";

/** Time a probe gets to find its executable and start it before Core's thread is busy readying Ajv. */
const PROBE_START_GRACE_MS = 25;

export interface ProviderWarmupOptions {
  providers: ProviderRegistry;
  loadSettings: () => Promise<Settings>;
  /** The validators whose Ajv to load meanwhile; the ones sessions share unless a test gives its own. */
  validators?: ToolArgsValidators;
}

/**
 * The provider worth probing before a page asks: the one it most likely asks for, which is the default provider, or
 * else the only one `pedelec install` found. Probing more would start processes that compete with Core and the
 * browser, which are starting on the same machine, for a session nobody may ask for. Pedelec's own agent needs no
 * probe (its version is Core's).
 */
export function providerToWarm(settings: Settings, providers: ProviderRegistry): ProviderCode | undefined {
  const recorded = providers.supportedCodes().filter((code) => settings.providers[code]?.path !== undefined);
  const likely = settings.defaultProvider ?? (recorded.length === 1 ? recorded[0] : undefined);
  return likely === undefined || providers.get(likely)?.bundled === true ? undefined : likely;
}

/**
 * Readies, at Core's start and without holding it up, what a page's first createSession would otherwise wait for:
 * the login shell's PATH, the probe of the likely provider (finding the executable, `<cli> --version`) and Ajv's first
 * compilation for the session's tool schemas (while the probe runs, or at once when there is nothing to probe). The probe goes through `locator`, so createSession joins it in flight
 * instead of starting another and finds its answer afterwards (see ProviderLocator.warm); a changed
 * `providers.<code>.path` is a different probe. Resolves once all is done; never rejects.
 */
export async function warmProviders(locator: ProviderLocator, options: ProviderWarmupOptions): Promise<void> {
  // Every probe and every session needs it, and it is often the slowest part: started before anything else.
  locator.warmLoginShellPath();
  let settings: Settings;
  try {
    settings = await options.loadSettings();
  } catch {
    return;
  }
  const validators = options.validators ?? sharedToolArgsValidators;
  const code = providerToWarm(settings, options.providers);
  const adapter = code === undefined ? undefined : options.providers.get(code);
  if (adapter === undefined) {
    warmValidators(validators);
    return;
  }
  const probed = locator.warm(adapter, settings.providers[adapter.code]?.path);
  // A page's createSession would wait for this probe's process anyway: once the probe has had a moment to find the
  // executable and start it, ready Ajv meanwhile.
  await new Promise((resolve) => setTimeout(resolve, PROBE_START_GRACE_MS));
  warmValidators(validators);
  await probed;
}

function warmValidators(validators: ToolArgsValidators): void {
  try {
    validators.warm();
  } catch (error) {
    // The first session with tools loads it again and reports what fails.
    log("warn", "could not load the tool schema validator ahead of need", { error: String(error) });
  }
}
