import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderCode } from "@pedelec/protocol/domain";
import type { ProviderAdapter, ProviderDiscovery } from "./providers/provider-adapter.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { discoverProvider } from "./providers/provider-discovery.js";

const DISCOVERY_TTL_MS = 5_000;
const DISCOVERY_TIMEOUT_MS = 10_000;

export interface LocatedProvider {
  adapter: ProviderAdapter;
  executablePath: string;
}

/** Finds a provider's executable (PEDELEC_PROVIDER_PATH first) and checks it answers, with a short cache. */
export class ProviderLocator {
  readonly #cache = new Map<ProviderCode, { at: number; discovery: ProviderDiscovery }>();

  constructor(
    private readonly providers: ProviderRegistry,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  async locate(provider: ProviderCode, isDefault: boolean): Promise<LocatedProvider> {
    const unavailable = isDefault ? "DEFAULT_PROVIDER_UNAVAILABLE" : "PROVIDER_UNAVAILABLE";
    const adapter = this.providers.get(provider);
    if (!adapter) {
      throw new PedelecError(unavailable, `the ${provider} provider is not supported by this version of Pedelec`);
    }
    const discovery = await this.#discover(adapter);
    if (!discovery.available || discovery.executablePath === null) {
      throw new PedelecError(unavailable, discovery.error ?? `${adapter.displayName} is not available`, {
        provider,
        executablePath: discovery.executablePath,
      });
    }
    return { adapter, executablePath: discovery.executablePath };
  }

  async #discover(adapter: ProviderAdapter): Promise<ProviderDiscovery> {
    const cached = this.#cache.get(adapter.code);
    if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.discovery;
    const discovery = await discoverProvider(adapter, this.env, AbortSignal.timeout(DISCOVERY_TIMEOUT_MS));
    this.#cache.set(adapter.code, { at: Date.now(), discovery });
    return discovery;
  }
}
