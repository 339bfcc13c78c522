import { PROVIDER_CODES, PROVIDER_NAMES } from "@pedelec/protocol/domain";
import type { ProviderStatus } from "@pedelec/protocol/requests";
import type { ProviderLocator } from "./provider-locator.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import type { Settings } from "./settings.js";

/** A provider's status with what only local programs see: the version and the executable found. */
export interface ProviderReport extends ProviderStatus {
  version: string | null;
  executablePath: string | null;
}

/** Every provider Pedelec knows, whether this machine can run it, and a sentence saying why not. */
export async function reportProviders(providers: ProviderRegistry, locator: ProviderLocator, settings: Settings): Promise<ProviderReport[]> {
  return Promise.all(
    PROVIDER_CODES.map(async (code): Promise<ProviderReport> => {
      const adapter = providers.get(code);
      if (!adapter) {
        const error = "not supported by this version of Pedelec";
        return { code, name: PROVIDER_NAMES[code], available: false, error, version: null, executablePath: null };
      }
      const discovery = await locator.discover(adapter, settings.providers[code]?.path);
      // Found, and yet the provider may not be usable with these settings (Pedelec's own agent: its endpoint).
      const problem = discovery.available && adapter.readinessProblem ? await adapter.readinessProblem(settings) : null;
      if (problem !== null)
        return {
          code,
          name: adapter.displayName,
          available: false,
          error: problem,
          version: discovery.version,
          executablePath: discovery.executablePath,
        };
      return {
        code,
        name: adapter.displayName,
        available: discovery.available,
        error: discovery.available ? null : discovery.error,
        version: discovery.version,
        executablePath: discovery.executablePath,
      };
    }),
  );
}
