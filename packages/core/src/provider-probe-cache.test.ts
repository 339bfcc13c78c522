import { chmod, mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PROBE_CACHE_RECHECK_DELAY_MS, ProviderLocator } from "./provider-locator.js";
import { PROBE_CACHE_MAX_AGE_MS, ProviderProbeCache } from "./provider-probe-cache.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { countedProvider } from "./testing/counted-provider.js";

let root: string;
let cli: string;
let cacheFile: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "pedelec-probe-cache-"));
  cli = path.join(root, "fake-claude");
  await writeFile(cli, "#!/bin/sh\necho 1.2.3\n");
  await chmod(cli, 0o755);
  cacheFile = path.join(root, "home", "provider-probes.json");
  env = { PEDELEC_PROVIDER_PATH: root, PATH: "", HOME: root };
});
afterEach(async () => {
  vi.useRealTimers();
  await rm(root, { recursive: true, force: true });
});

/** A locator as a newly started Core builds it: nothing in memory, the cache file on disk. */
function freshCore(registry: ProviderRegistry, now: () => number = Date.now, environment = env): ProviderLocator {
  return new ProviderLocator(registry, environment, undefined, now, new ProviderProbeCache(cacheFile, now));
}

describe("the provider probe cache", () => {
  it("lets a restarted Core answer without running the CLI, for the same file and environment", async () => {
    const provider = countedProvider(["available"]);
    expect(await freshCore(provider.registry).locate("claude", false)).toMatchObject({ executablePath: cli });
    expect(provider.probes()).toBe(1);
    const second = freshCore(provider.registry);
    expect(await second.discover(provider.registry.get("claude")!)).toEqual({ available: true, executablePath: cli, version: "1.2.3", error: null });
    expect(provider.probes()).toBe(1);
    const kept = JSON.parse(await readFile(cacheFile, "utf8"));
    expect(kept).toMatchObject({ version: 1, probes: { claude: { executablePath: cli, version: "1.2.3" } } });
    expect((await stat(cacheFile)).mode & 0o777).toBe(0o600);
  });

  it("probes again when the executable changed, the environment differs, or the answer is a day old", async () => {
    let clock = Date.now();
    const now = () => clock;
    const provider = countedProvider(["available"]);
    await freshCore(provider.registry, now).locate("claude", false);
    expect(provider.probes()).toBe(1);

    // The CLI was updated in place: its size and times change.
    await writeFile(cli, "#!/bin/sh\necho 1.2.4\n# updated\n");
    await freshCore(provider.registry, now).locate("claude", false);
    expect(provider.probes()).toBe(2);

    // Another environment (here a key the CLI's sign-in may read).
    await freshCore(provider.registry, now, { ...env, CURSOR_API_KEY: "key" }).locate("claude", false);
    expect(provider.probes()).toBe(3);
    await freshCore(provider.registry, now, { ...env, CURSOR_API_KEY: "key" }).locate("claude", false);
    expect(provider.probes()).toBe(3);

    clock += PROBE_CACHE_MAX_AGE_MS + 1;
    await freshCore(provider.registry, now, { ...env, CURSOR_API_KEY: "key" }).locate("claude", false);
    expect(provider.probes()).toBe(4);
  });

  it("keeps no unavailable answer and forgets a kept one when the provider stops being available", async () => {
    let state: "available" | "signed-out" = "available";
    const provider = countedProvider(() => state);
    await freshCore(provider.registry).locate("claude", false);
    state = "signed-out";
    // Same file, so the cache answers; the real probe is due later (see the next test).
    await freshCore(provider.registry).locate("claude", false);
    expect(provider.probes()).toBe(1);
    // A touch makes the file another one: the probe runs, says signed out, and the entry goes.
    await utimes(cli, new Date(), new Date(Date.now() + 5_000));
    await expect(freshCore(provider.registry).locate("claude", false)).rejects.toMatchObject({ code: "PROVIDER_UNAVAILABLE" });
    expect(provider.probes()).toBe(2);
    expect(JSON.parse(await readFile(cacheFile, "utf8")).probes).toEqual({});
    await expect(freshCore(provider.registry).locate("claude", false)).rejects.toMatchObject({ code: "PROVIDER_UNAVAILABLE" });
    expect(provider.probes()).toBe(3);
  });

  it("runs the real probe once, a while after answering from the cache, and keeps what it says", async () => {
    let state: "available" | "signed-out" = "available";
    const provider = countedProvider(() => state);
    await freshCore(provider.registry).locate("claude", false);
    state = "signed-out";
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    const locator = freshCore(provider.registry);
    await locator.locate("claude", false);
    await freshCore(provider.registry).locate("claude", false);
    expect(provider.probes()).toBe(1);
    vi.advanceTimersByTime(PROBE_CACHE_RECHECK_DELAY_MS);
    vi.useRealTimers();
    await vi.waitFor(async () => expect(JSON.parse(await readFile(cacheFile, "utf8")).probes).toEqual({}), { timeout: 5_000 });
    // Two Cores answered from the cache; each checks once.
    expect(provider.probes()).toBe(3);
  });

  it("ignores a cache file it cannot read, and writes it anew", async () => {
    await rm(path.dirname(cacheFile), { recursive: true, force: true });
    const provider = countedProvider(["available"]);
    for (const junk of [
      "{not json",
      JSON.stringify({ version: 9, probes: {} }),
      JSON.stringify({ version: 1, probes: { claude: { executablePath: 5 } } }),
    ]) {
      await freshCore(provider.registry).locate("claude", false);
      const probes = provider.probes();
      await writeFile(cacheFile, junk);
      await freshCore(provider.registry).locate("claude", false);
      expect(provider.probes()).toBe(probes + 1);
      expect(JSON.parse(await readFile(cacheFile, "utf8"))).toMatchObject({ version: 1, probes: { claude: { version: "1.2.3" } } });
    }
  });
});
