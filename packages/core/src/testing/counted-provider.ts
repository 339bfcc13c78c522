import type { ProviderAdapter, ProviderDiscovery } from "../providers/provider-adapter.js";
import type { ProviderRegistry } from "../providers/provider-registry.js";

/** What a probe of the fake CLI reports. */
export type FakeProbeAnswer = "available" | "timed-out" | "broken" | "signed-out";

/**
 * A claude provider whose executable is `fake-claude` and whose probes are counted, for tests of how probes are shared,
 * retried and cached. `answers[n]` is what the n-th probe reports (the last one repeats), or a function asked at each
 * probe; each probe takes `delayMs`.
 */
export function countedProvider(answers: readonly FakeProbeAnswer[] | (() => FakeProbeAnswer), delayMs = 0) {
  let probes = 0;
  const next = (): FakeProbeAnswer => (typeof answers === "function" ? answers() : answers[Math.min(probes, answers.length - 1)]!);
  const { adapter, registry } = fakeClaudeProvider(async (executablePath): Promise<ProviderDiscovery> => {
    const answer = next();
    probes += 1;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    switch (answer) {
      case "available":
        return { available: true, executablePath, version: "1.2.3", error: null };
      case "timed-out":
        return { available: false, executablePath, version: null, error: "fake-claude --version failed: no answer within 5 s", transient: true };
      case "broken":
        return { available: false, executablePath, version: null, error: "fake-claude --version failed: exit code 2" };
      case "signed-out":
        return { available: false, executablePath, version: null, error: "fake-claude is installed but not signed in" };
    }
  });
  return { adapter, registry, probes: () => probes };
}

/** A claude provider whose executable is `fake-claude`, probed by `discover`, and a registry holding only it. */
export function fakeClaudeProvider(discover: ProviderAdapter["discover"]): { adapter: ProviderAdapter; registry: ProviderRegistry } {
  const adapter: ProviderAdapter = {
    code: "claude",
    displayName: "Fake Claude",
    programName: "fake-claude",
    capabilities: { textDeltas: true, resume: true },
    defaultEffortProfiles: () => ({ low: [], medium: [], high: [] }),
    validateEffortArgv: (tokens) => [...tokens],
    discover,
    runTurn: () => Promise.resolve({ ok: true }),
  };
  return { adapter, registry: { get: (code) => (code === "claude" ? adapter : undefined), supportedCodes: () => ["claude"] } };
}
