import { delimiter } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderCode } from "@pedelec/protocol/domain";
import type { ProviderAdapter, ProviderDiscovery } from "./providers/provider-adapter.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { discoverProvider, type ExecutableProbe } from "./providers/provider-discovery.js";
import type { LoginShellPath } from "./providers/login-shell-path.js";
import type { ProviderProbeCache } from "./provider-probe-cache.js";

const DISCOVERY_TTL_MS = 5_000;
/**
 * How long an answer from warm() waits for its first caller: a page's first createSession often comes well after Core
 * started (the user reads the page, answers the approval window). Only "available" waits that long; a provider
 * installed meanwhile is seen as soon as the usual TTL has passed.
 */
export const WARM_DISCOVERY_TTL_MS = 60_000;
const DISCOVERY_TIMEOUT_MS = 10_000;
/**
 * After an answer from the probe cache, the real probe runs this much later, off the first session's path, so a CLI
 * that stopped working without its file changing (its runtime removed, signed out) is noticed for the next session.
 */
export const PROBE_CACHE_RECHECK_DELAY_MS = 15_000;

export interface LocatedProvider {
  adapter: ProviderAdapter;
  executablePath: string;
}

interface CachedDiscovery {
  at: number;
  discovery: ProviderDiscovery;
  /** Made by warm() and asked for by no one since: it may wait WARM_DISCOVERY_TTL_MS for its first caller. */
  unclaimedWarm: boolean;
}

interface InFlightProbe {
  answer: Promise<ProviderDiscovery>;
  /** Started by warm() and joined by no other caller (yet). */
  warmOnly: boolean;
}

/**
 * Finds a provider's executable (PEDELEC_PROVIDER_PATH first) and checks it answers. One probe per provider is in
 * flight at a time and every caller meanwhile shares its answer (a burst of createSession must not start a burst of
 * `--version` processes, which then time out on a busy machine); a conclusive answer is cached briefly, a probe that
 * could not finish is asked again and never cached. warm() runs a probe before anyone asks (see provider-warmup.ts).
 */
export class ProviderLocator {
  // Keyed by provider and configured path, so a changed setting is seen at once.
  readonly #cache = new Map<string, CachedDiscovery>();
  readonly #inFlight = new Map<string, InFlightProbe>();
  /** Providers whose real probe is due after an answer from the probe cache. */
  readonly #rechecks = new Set<ProviderCode>();

  /**
   * `loginShellPath`: where the user's login shell looks for programs, searched after the environment's own PATH
   * (Core started by the browser has the browser's PATH). Without it only the environment is searched.
   * `now`: the clock answers age by. `probeCache`: answers of earlier Cores (see ProviderProbeCache).
   */
  constructor(
    private readonly providers: ProviderRegistry,
    private readonly env: NodeJS.ProcessEnv,
    private readonly loginShellPath?: LoginShellPath,
    private readonly now: () => number = Date.now,
    private readonly probeCache?: ProviderProbeCache,
  ) {}

  /** `configuredPath`: settings `providers.<code>.path`, where `pedelec install` found the executable. */
  async locate(provider: ProviderCode, isDefault: boolean, configuredPath?: string): Promise<LocatedProvider> {
    const unavailable = isDefault ? "DEFAULT_PROVIDER_UNAVAILABLE" : "PROVIDER_UNAVAILABLE";
    const adapter = this.providers.get(provider);
    if (!adapter) {
      throw new PedelecError(unavailable, `the ${provider} provider is not supported by this version of Pedelec`);
    }
    const discovery = await this.#discover(adapter, configuredPath, false);
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
    return this.#discover(adapter, configuredPath, false);
  }

  /**
   * Probes `adapter` ahead of need, unless an answer is cached or a probe is in flight. A caller meanwhile joins the
   * probe; an "available" answer then waits up to WARM_DISCOVERY_TTL_MS for the first caller after it. Never rejects.
   */
  async warm(adapter: ProviderAdapter, configuredPath?: string): Promise<void> {
    await this.#discover(adapter, configuredPath, true).catch(() => undefined);
  }

  /** Starts reading the login shell's PATH (a process, slow with a busy profile) unless it is known or under way. */
  warmLoginShellPath(): void {
    void this.loginShellPath?.directories();
  }

  #discover(adapter: ProviderAdapter, configuredPath: string | undefined, warming: boolean): Promise<ProviderDiscovery> {
    const key = `${adapter.code}\0${configuredPath ?? ""}`;
    const cached = this.#cache.get(key);
    if (cached) {
      const age = this.now() - cached.at;
      if (age < DISCOVERY_TTL_MS || (cached.unclaimedWarm && age < WARM_DISCOVERY_TTL_MS)) {
        if (!warming) cached.unclaimedWarm = false;
        return Promise.resolve(cached.discovery);
      }
    }
    let probe = this.#inFlight.get(key);
    if (probe) {
      if (!warming) probe.warmOnly = false;
    } else {
      const claims = { warmOnly: warming };
      const answer = this.#probeOnce(adapter, configuredPath, key, claims).finally(() => this.#inFlight.delete(key));
      probe = Object.assign(claims, { answer });
      this.#inFlight.set(key, probe);
    }
    return probe.answer;
  }

  async #searchEnv(): Promise<NodeJS.ProcessEnv> {
    const extra = (await this.loginShellPath?.directories()) ?? [];
    if (extra.length === 0) return this.env;
    return { ...this.env, PATH: [this.env.PATH ?? "", ...extra].filter((entry) => entry !== "").join(delimiter) };
  }

  /**
   * Discovery with the login shell's PATH. The shell (a third of a second and more with a busy profile) and the CLI's
   * `--version` each start a process; while the shell has not answered yet, the probe also runs at once with the
   * environment's own PATH. If that finds the CLI working, it is the answer: the shell's folders come after the
   * environment's in the search (the usual install folders, after them, are left out of this early probe), so the
   * executable is the one the full search would find, and the shell's folders only add to a turn's PATH. Otherwise
   * the probe runs again once the shell has answered.
   */
  async #discoverNow(adapter: ProviderAdapter, configuredPath: string | undefined): Promise<ProviderDiscovery> {
    const signal = () => AbortSignal.timeout(DISCOVERY_TIMEOUT_MS);
    const probe = this.#probe;
    if (this.loginShellPath !== undefined && this.loginShellPath.known() === undefined) {
      void this.loginShellPath.directories();
      const early = await discoverProvider(adapter, this.env, signal(), configuredPath, { searchInstallFolders: false, probe });
      if (early.available) return early;
    }
    return discoverProvider(adapter, await this.#searchEnv(), signal(), configuredPath, { probe });
  }

  /** The adapter's probe, through the probe cache when there is one. */
  readonly #probe: ExecutableProbe = async (adapter, executablePath, signal, env) => {
    const cache = this.probeCache;
    if (cache === undefined) return adapter.discover(executablePath, signal, env);
    const kept = await cache.lookup(adapter.code, executablePath, env);
    if (kept !== undefined) {
      if (!this.#rechecks.has(adapter.code)) {
        this.#rechecks.add(adapter.code);
        setTimeout(() => {
          void adapter
            .discover(executablePath, AbortSignal.timeout(DISCOVERY_TIMEOUT_MS), env)
            .then((discovery) => cache.record(adapter.code, discovery, env))
            .catch(() => undefined)
            .finally(() => this.#rechecks.delete(adapter.code));
        }, PROBE_CACHE_RECHECK_DELAY_MS).unref();
      }
      return kept;
    }
    const discovery = await adapter.discover(executablePath, signal, env);
    await cache.record(adapter.code, discovery, env);
    return discovery;
  };

  async #probeOnce(
    adapter: ProviderAdapter,
    configuredPath: string | undefined,
    key: string,
    claims: Pick<InFlightProbe, "warmOnly">,
  ): Promise<ProviderDiscovery> {
    let discovery = await this.#discoverNow(adapter, configuredPath);
    // A probe that could not finish says nothing about the provider: ask once more before answering the waiters.
    if (discovery.transient) discovery = await this.#discoverNow(adapter, configuredPath);
    // Cached before the in-flight entry goes, so no caller falls between the two and starts a probe of its own.
    if (!discovery.transient) {
      this.#cache.set(key, { at: this.now(), discovery, unclaimedWarm: claims.warmOnly && discovery.available });
    }
    return discovery;
  }
}
