import { PROVIDER_CODES, PROVIDER_NAMES, type ProviderCode } from "@pedelec/protocol/domain";
import type { ProviderStatus } from "@pedelec/protocol/requests";
import type { ProviderLocator } from "./provider-locator.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import type { Settings } from "./settings.js";
import { isModelInstalled, listInstalledModels } from "./providers/ollama/ollama-endpoint.js";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

const ENDPOINT_PROBE_TIMEOUT_MS = 5_000;

/**
 * Whether the Ollama endpoint answers with the key and has the default model: Pedelec's own agent is always there,
 * so this is what "available" means for ollama. Returns the reason when it cannot be used.
 */
async function ollamaEndpointProblem(settings: Settings): Promise<string | null> {
  try {
    const installed = await listInstalledModels(settings.ollama, AbortSignal.timeout(ENDPOINT_PROBE_TIMEOUT_MS));
    const model = settings.defaultModels.ollama;
    if (model !== undefined && !isModelInstalled(model, installed)) {
      return `the default model ${model} is not installed at ${settings.ollama.baseUrl}; run \`ollama pull ${model}\``;
    }
    return null;
  } catch (error) {
    return PedelecError.from(error, "OLLAMA_UNAVAILABLE").message;
  }
}

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
      if (code === "ollama" && discovery.available) {
        const problem = await ollamaEndpointProblem(settings);
        if (problem !== null) return { code, name: adapter.displayName, available: false, error: problem, version: discovery.version, executablePath: discovery.executablePath };
      }
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
