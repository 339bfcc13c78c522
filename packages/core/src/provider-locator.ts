import { delimiter } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderCode } from "@pedelec/protocol/domain";
import type { ProviderAdapter, ProviderDiscovery } from "./providers/provider-adapter.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { discoverProvider } from "./providers/provider-discovery.js";
import type { LoginShellPath } from "./providers/login-shell-path.js";

const DISCOVERY_TTL_MS = 5_000;
const DISCOVERY_TIMEOUT_MS = 10_000;

export interface LocatedProvider {
  adapter: ProviderAdapter;
  executablePath: string;
}

/**
 * Finds a provider's executable (PEDELEC_PROVIDER_PATH first) and checks it answers. One probe per provider is in
 * flight at a time and every caller meanwhile shares its answer (a burst of createSession must not start a burst of
 * `--version` processes, which then time out on a busy machine); a conclusive answer is cached briefly, a probe that
 * could not finish is asked again and never cached.
 */
export class ProviderLocator {
  // Keyed by provider and configured path, so a changed setting is seen at once.
  readonly #cache = new Map<string, { at: number; discovery: ProviderDiscovery }>();
  readonly #inFlight = new Map<string, Promise<ProviderDiscovery>>();

  /**
   * `loginShellPath`: where the user's login shell looks for programs, searched after the environment's own PATH
   * (Core started by the browser has the browser's PATH). Without it only the environment is searched.
   */
  constructor(
    private readonly providers: ProviderRegistry,
    private readonly env: NodeJS.ProcessEnv,
    private readonly loginShellPath?: LoginShellPath,
  ) {}

  /** `configuredPath`: settings `providers.<code>.path`, where `pedelec install` found the executable. */
  async locate(provider: ProviderCode, isDefault: boolean, configuredPath?: string): Promise<LocatedProvider> {
    const unavailable = isDefault ? "DEFAULT_PROVIDER_UNAVAILABLE" : "PROVIDER_UNAVAILABLE";
    const adapter = this.providers.get(provider);
    if (!adapter) {
      throw new PedelecError(unavailable, `the ${provider} provider is not supported by this version of Pedelec`);
    }
    const discovery = await this.#discover(adapter, configuredPath);
    if (!discovery.available || discovery.executablePath === null) {
      throw new PedelecError(unavailable, discovery.error ?? `${adapter.displayName} is not available`, {
        provider,
        executablePath: discovery.executablePath,
      });
    }
    return { adapter, executablePath: discovery.executablePath };
  }

  /** What discovery says about `adapter` now (shared and cached like locate's probes). */
  discover(adapter: ProviderAdapter, configuredPath?: string): Promise<ProviderDiscovery> {
    return this.#discover(adapter, configuredPath);
  }

  #discover(adapter: ProviderAdapter, configuredPath: string | undefined): Promise<ProviderDiscovery> {
    const key = `${adapter.code}\0${configuredPath ?? ""}`;
    const cached = this.#cache.get(key);
    if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return Promise.resolve(cached.discovery);
    let probe = this.#inFlight.get(key);
    if (!probe) {
      probe = this.#probe(adapter, configuredPath, key).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, probe);
    }
    return probe;
  }

  async #searchEnv(): Promise<NodeJS.ProcessEnv> {
    const extra = (await this.loginShellPath?.directories()) ?? [];
    if (extra.length === 0) return this.env;
    return { ...this.env, PATH: [this.env.PATH ?? "", ...extra].filter((entry) => entry !== "").join(delimiter) };
  }

  async #probe(adapter: ProviderAdapter, configuredPath: string | undefined, key: string): Promise<ProviderDiscovery> {
    const env = await this.#searchEnv();
    const discover = () => discoverProvider(adapter, env, AbortSignal.timeout(DISCOVERY_TIMEOUT_MS), configuredPath);
    let discovery = await discover();
    // A probe that could not finish says nothing about the provider: ask once more before answering the waiters.
    if (discovery.transient) discovery = await discover();
    // Cached before the in-flight entry goes, so no caller falls between the two and starts a probe of its own.
    if (!discovery.transient) this.#cache.set(key, { at: Date.now(), discovery });
    return discovery;
  }
}
