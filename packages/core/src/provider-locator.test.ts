import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ProviderLocator } from "./provider-locator.js";
import type { ProviderAdapter, ProviderDiscovery } from "./providers/provider-adapter.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";

let root: string;
let env: NodeJS.ProcessEnv;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "pedelec-locator-"));
  await writeFile(path.join(root, "fake-claude"), "#!/bin/sh\nexit 0\n");
  await chmod(path.join(root, "fake-claude"), 0o755);
  env = { PEDELEC_PROVIDER_PATH: root, PATH: "", HOME: root };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A provider whose probe is slow and counted; `answers[n]` is what the n-th probe reports (the last one repeats). */
function slowProvider(answers: readonly ("available" | "timed-out" | "broken")[]) {
  let probes = 0;
  const adapter: ProviderAdapter = {
    code: "claude",
    displayName: "Fake Claude",
    programName: "fake-claude",
    capabilities: { textDeltas: true, resume: true },
    defaultEffortProfiles: () => ({ low: [], medium: [], high: [] }),
    discover: async (executablePath): Promise<ProviderDiscovery> => {
      const answer = answers[Math.min(probes, answers.length - 1)];
      probes += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (answer === "available") return { available: true, executablePath, version: "1.2.3", error: null };
      if (answer === "timed-out") {
        return { available: false, executablePath, version: null, error: "fake-claude --version failed: no answer within 5 s", transient: true };
      }
      return { available: false, executablePath, version: null, error: "fake-claude --version failed: exit code 2" };
    },
    runTurn: () => Promise.resolve({ ok: true }),
  };
  const registry: ProviderRegistry = { get: (code) => (code === "claude" ? adapter : undefined), supportedCodes: () => ["claude"] };
  return { registry, probes: () => probes };
}

describe("ProviderLocator", () => {
  it("shares one probe among 100 concurrent callers, then answers from its cache", async () => {
    const provider = slowProvider(["available"]);
    const locator = new ProviderLocator(provider.registry, env);
    const located = await Promise.all(Array.from({ length: 100 }, () => locator.locate("claude", false)));
    expect(provider.probes()).toBe(1);
    expect(new Set(located.map((entry) => entry.executablePath))).toEqual(new Set([path.join(root, "fake-claude")]));
    await locator.locate("claude", false);
    expect(provider.probes()).toBe(1);
  });

  it("asks once more when a probe could not finish, and every waiter gets the second answer", async () => {
    const provider = slowProvider(["timed-out", "available"]);
    const locator = new ProviderLocator(provider.registry, env);
    const located = await Promise.all(Array.from({ length: 10 }, () => locator.locate("claude", false)));
    expect(located).toHaveLength(10);
    expect(provider.probes()).toBe(2);
  });

  it("does not cache a probe that could not finish: the next caller probes again", async () => {
    const provider = slowProvider(["timed-out", "timed-out", "available"]);
    const locator = new ProviderLocator(provider.registry, env);
    await expect(locator.locate("claude", false)).rejects.toMatchObject({
      code: "PROVIDER_UNAVAILABLE",
      message: "fake-claude --version failed: no answer within 5 s",
    });
    expect(provider.probes()).toBe(2);
    await expect(locator.locate("claude", true)).resolves.toMatchObject({ executablePath: path.join(root, "fake-claude") });
    expect(provider.probes()).toBe(3);
  });

  it("caches a conclusive failure like a success", async () => {
    const provider = slowProvider(["broken", "available"]);
    const locator = new ProviderLocator(provider.registry, env);
    await expect(locator.locate("claude", false)).rejects.toMatchObject({ code: "PROVIDER_UNAVAILABLE", message: expect.stringContaining("exit code 2") as string });
    await expect(locator.locate("claude", true)).rejects.toMatchObject({ code: "DEFAULT_PROVIDER_UNAVAILABLE" });
    expect(provider.probes()).toBe(1);
  });
});
