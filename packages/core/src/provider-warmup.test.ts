import { access, chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ProviderCode } from "@pedelec/protocol/domain";
import { ProviderLocator } from "./provider-locator.js";
import { LoginShellPath } from "./providers/login-shell-path.js";
import { providerToWarm, warmProviders } from "./provider-warmup.js";
import type { ProviderAdapter, ProviderDiscovery } from "./providers/provider-adapter.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { createProviderRegistry } from "./providers/provider-registry.js";
import { settingsFileSchema, type Settings } from "./settings.js";
import { ToolArgsValidators } from "./tool-args-validators.js";

let root: string;
let env: NodeJS.ProcessEnv;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "pedelec-warmup-"));
  for (const program of ["fake-claude", "fake-codex"]) {
    await writeFile(path.join(root, program), "#!/bin/sh\nexit 0\n");
    await chmod(path.join(root, program), 0o755);
  }
  env = { PEDELEC_PROVIDER_PATH: root, PATH: "", HOME: root };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const settingsWith = (fields: Record<string, unknown>): Settings => settingsFileSchema.parse(fields);

/** Two providers whose probes are slow and logged. */
function slowProviders() {
  const started: ProviderCode[] = [];
  const adapter = (code: ProviderCode, programName: string): ProviderAdapter => ({
    code,
    displayName: programName,
    programName,
    capabilities: { textDeltas: true, resume: true },
    defaultEffortProfiles: () => ({ low: [], medium: [], high: [] }),
    validateEffortArgv: (tokens) => tokens,
    discover: async (executablePath): Promise<ProviderDiscovery> => {
      started.push(code);
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { available: true, executablePath, version: "1.0.0", error: null };
    },
    runTurn: () => Promise.resolve({ ok: true }),
  });
  const adapters = new Map<ProviderCode, ProviderAdapter>([
    ["codex", adapter("codex", "fake-codex")],
    ["claude", adapter("claude", "fake-claude")],
  ]);
  const registry: ProviderRegistry = { get: (code) => adapters.get(code), supportedCodes: () => [...adapters.keys()] };
  return { registry, started };
}

describe("providerToWarm", () => {
  it("is the default provider, or else the only provider `pedelec install` recorded", () => {
    const registry = createProviderRegistry();
    const recorded = { codex: { path: "/opt/codex" }, claude: { path: "/opt/claude" } };
    expect(providerToWarm(settingsWith({ defaultProvider: "cursor", providers: recorded }), registry)).toBe("cursor");
    expect(providerToWarm(settingsWith({ providers: { claude: { path: "/opt/claude" } } }), registry)).toBe("claude");
  });

  it("is none when a page might ask for any of several providers, on a fresh install, or for Pedelec's own agent", () => {
    const registry = createProviderRegistry();
    expect(providerToWarm(settingsWith({ providers: { codex: { path: "/opt/codex" }, claude: { path: "/opt/claude" } } }), registry)).toBeUndefined();
    expect(providerToWarm(settingsWith({}), registry)).toBeUndefined();
    expect(providerToWarm(settingsWith({ defaultProvider: "ollama" }), registry)).toBeUndefined();
  });
});

describe("warmProviders", () => {
  it("probes the default provider only, and loads Ajv meanwhile", async () => {
    const providers = slowProviders();
    const locator = new ProviderLocator(providers.registry, env);
    const validators = new ToolArgsValidators();
    const warm = vi.spyOn(validators, "warm");
    const settings = settingsWith({ defaultProvider: "claude", providers: { codex: { path: path.join(root, "fake-codex") } } });
    await warmProviders(locator, { providers: providers.registry, loadSettings: () => Promise.resolve(settings), validators });
    expect(providers.started).toEqual(["claude"]);
    expect(warm).toHaveBeenCalledTimes(1);
  });

  it("hands its probe to a createSession that comes meanwhile, and its answer to one that comes after", async () => {
    const providers = slowProviders();
    const locator = new ProviderLocator(providers.registry, env);
    const settings = settingsWith({ defaultProvider: "claude" });
    const warming = warmProviders(locator, { providers: providers.registry, loadSettings: () => Promise.resolve(settings) });
    // Settings load first, so the probe starts a moment later: wait until it has.
    await vi.waitFor(() => expect(providers.started).toEqual(["claude"]), { timeout: 5_000 });
    const located = await locator.locate("claude", true);
    await warming;
    await locator.locate("claude", true);
    expect(located.executablePath).toBe(path.join(root, "fake-claude"));
    expect(providers.started).toEqual(["claude"]);
  });

  it("readies Ajv at once when there is nothing to probe, and resolves when settings cannot be read", async () => {
    const providers = slowProviders();
    const locator = new ProviderLocator(providers.registry, env);
    const validators = new ToolArgsValidators();
    const warm = vi.spyOn(validators, "warm");
    await warmProviders(locator, { providers: providers.registry, loadSettings: () => Promise.resolve(settingsWith({})), validators });
    expect(warm).toHaveBeenCalledTimes(1);
    warm.mockClear();
    await expect(
      warmProviders(locator, { providers: providers.registry, loadSettings: () => Promise.reject(new Error("unreadable")), validators }),
    ).resolves.toBeUndefined();
    expect(warm).not.toHaveBeenCalled();
    expect(providers.started).toEqual([]);
  });

  it("starts the login shell before it has even read the settings", async () => {
    const providers = slowProviders();
    const marker = path.join(root, "shell-started");
    const shell = path.join(root, "fake-shell");
    await writeFile(shell, `#!/bin/sh\ntouch ${JSON.stringify(marker)}\nshift 3\neval "$1"\n`);
    await chmod(shell, 0o755);
    const locator = new ProviderLocator(providers.registry, env, new LoginShellPath({ SHELL: shell, PATH: "/usr/bin" }));
    let settingsRead: (settings: Settings) => void = () => undefined;
    const settings = new Promise<Settings>((resolve) => (settingsRead = resolve));
    const warming = warmProviders(locator, { providers: providers.registry, loadSettings: () => settings });
    await vi.waitFor(() => access(marker), { timeout: 10_000 });
    expect(providers.started).toEqual([]);
    settingsRead(settingsWith({}));
    await warming;
  });
});
