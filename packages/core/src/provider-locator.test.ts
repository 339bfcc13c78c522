import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ProviderLocator, WARM_DISCOVERY_TTL_MS } from "./provider-locator.js";
import type { ProviderDiscovery } from "./providers/provider-adapter.js";
import { LoginShellPath } from "./providers/login-shell-path.js";
import { countedProvider, fakeClaudeProvider, type FakeProbeAnswer } from "./testing/counted-provider.js";

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

/** A provider whose probe takes 50 ms and is counted (see countedProvider). */
const slowProvider = (answers: readonly FakeProbeAnswer[]) => countedProvider(answers, 50);

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
    await expect(locator.locate("claude", false)).rejects.toMatchObject({
      code: "PROVIDER_UNAVAILABLE",
      message: expect.stringContaining("exit code 2") as string,
    });
    await expect(locator.locate("claude", true)).rejects.toMatchObject({ code: "DEFAULT_PROVIDER_UNAVAILABLE" });
    expect(provider.probes()).toBe(1);
  });

  it("lets a caller join a probe warm() started, instead of starting a second one", async () => {
    const provider = slowProvider(["available"]);
    const locator = new ProviderLocator(provider.registry, env);
    const adapter = provider.registry.get("claude")!;
    const warming = locator.warm(adapter);
    const located = await locator.locate("claude", false);
    await warming;
    expect(located.executablePath).toBe(path.join(root, "fake-claude"));
    expect(provider.probes()).toBe(1);
  });

  it("keeps a warm answer for its first caller past the usual five seconds, then ages it as usual", async () => {
    const provider = slowProvider(["available"]);
    let now = 1_000_000;
    const locator = new ProviderLocator(provider.registry, env, undefined, () => now);
    const adapter = provider.registry.get("claude")!;
    await locator.warm(adapter);
    now += WARM_DISCOVERY_TTL_MS - 1;
    await locator.locate("claude", false);
    expect(provider.probes()).toBe(1);
    await locator.locate("claude", false);
    expect(provider.probes()).toBe(2);
  });

  it("lets a warm answer a caller joined in flight age as usual", async () => {
    const provider = slowProvider(["available"]);
    let now = 1_000_000;
    const locator = new ProviderLocator(provider.registry, env, undefined, () => now);
    const warming = locator.warm(provider.registry.get("claude")!);
    await locator.locate("claude", false);
    await warming;
    now += 10_000;
    await locator.locate("claude", false);
    expect(provider.probes()).toBe(2);
  });

  it("does not keep a warm 'unavailable' longer than any other answer, and warm() itself never rejects", async () => {
    const provider = slowProvider(["broken", "available"]);
    let now = 1_000_000;
    const locator = new ProviderLocator(provider.registry, env, undefined, () => now);
    await expect(locator.warm(provider.registry.get("claude")!)).resolves.toBeUndefined();
    now += 10_000;
    await expect(locator.locate("claude", false)).resolves.toMatchObject({ executablePath: path.join(root, "fake-claude") });
    expect(provider.probes()).toBe(2);
  });

  it("probes again when the configured path differs from the one warmed", async () => {
    const provider = slowProvider(["available"]);
    const locator = new ProviderLocator(provider.registry, env);
    await locator.warm(provider.registry.get("claude")!);
    await locator.locate("claude", false, path.join(root, "fake-claude"));
    expect(provider.probes()).toBe(2);
  });
});

describe("ProviderLocator with a slow login shell", () => {
  /** A login shell that answers after `seconds` with /opt/tools/bin added to PATH. */
  async function slowShell(seconds: number): Promise<string> {
    const file = path.join(root, "slow-shell");
    await writeFile(file, `#!/bin/sh\nsleep ${seconds}\nPATH="/opt/tools/bin:$PATH"\nshift 3\neval "$1"\n`);
    await chmod(file, 0o755);
    return file;
  }

  /** A provider whose probe records the PATH it ran with, and works only when `works(PATH)` says so. */
  function pathCheckingProvider(works: (pathValue: string) => boolean) {
    const probedWith: string[] = [];
    const { registry } = fakeClaudeProvider((executablePath, _signal, probeEnv): Promise<ProviderDiscovery> => {
      probedWith.push(probeEnv.PATH ?? "");
      return Promise.resolve(
        works(probeEnv.PATH ?? "")
          ? { available: true, executablePath, version: "1.2.3", error: null }
          : {
              available: false,
              executablePath,
              version: null,
              error: "fake-claude --version failed: exit code 127: env: node: No such file or directory",
            },
      );
    });
    return { registry, probedWith };
  }

  it("does not wait for the shell when the CLI works with the environment's own PATH", async () => {
    const provider = pathCheckingProvider(() => true);
    const shellPath = new LoginShellPath({ SHELL: await slowShell(3), PATH: "/usr/bin" }, 10_000);
    const locator = new ProviderLocator(provider.registry, { ...env, PATH: "/usr/bin" }, shellPath);
    await expect(locator.locate("claude", false)).resolves.toMatchObject({ executablePath: path.join(root, "fake-claude") });
    expect(shellPath.known()).toBeUndefined();
    expect(provider.probedWith).toEqual(["/usr/bin"]);
    // The shell's answer still arrives, for the session's turns.
    expect(await shellPath.directories()).toContain("/opt/tools/bin");
  });

  it("probes again with the shell's PATH when the CLI does not work without it", async () => {
    const provider = pathCheckingProvider((pathValue) => pathValue.includes("/opt/tools/bin"));
    const shellPath = new LoginShellPath({ SHELL: await slowShell(0.2), PATH: "/usr/bin" }, 10_000);
    const locator = new ProviderLocator(provider.registry, { ...env, PATH: "/usr/bin" }, shellPath);
    await expect(locator.locate("claude", false)).resolves.toMatchObject({ executablePath: path.join(root, "fake-claude") });
    expect(provider.probedWith).toHaveLength(2);
    expect(provider.probedWith[0]).toBe("/usr/bin");
    expect(provider.probedWith[1]?.split(path.delimiter)).toContain("/opt/tools/bin");
  });

  it("looks in the usual install folders only once the shell has answered, as the full search does", async () => {
    const provider = pathCheckingProvider(() => true);
    const installFolder = path.join(root, ".local", "bin");
    await mkdir(installFolder, { recursive: true });
    await writeFile(path.join(installFolder, "fake-claude"), "#!/bin/sh\nexit 0\n");
    await chmod(path.join(installFolder, "fake-claude"), 0o755);
    const shellPath = new LoginShellPath({ SHELL: await slowShell(0.2), PATH: "/usr/bin" }, 10_000);
    const locator = new ProviderLocator(provider.registry, { PATH: "/usr/bin", HOME: root }, shellPath);
    await expect(locator.locate("claude", false)).resolves.toMatchObject({ executablePath: path.join(installFolder, "fake-claude") });
    expect(shellPath.known()).toContain("/opt/tools/bin");
    expect(provider.probedWith).toHaveLength(1);
  });
});
