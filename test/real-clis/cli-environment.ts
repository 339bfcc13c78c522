import { existsSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RealCli } from "./real-clis.js";

/** The variables one real-CLI run adds to a clean base environment, and the private folders they point at. */
export interface PrivateCliEnvironment {
  /** Only the variables to add: HOME, TMPDIR and the CLI's own. */
  env: Record<string, string>;
  home: string;
  tmpdir: string;
  /** where the CLI keeps its state: claude HOME/.claude, codex CODEX_HOME, opencode XDG data dir */
  stateDir: string;
}

/** What `privateCliEnvironment` may be told besides the CLI and its server. */
export interface PrivateCliEnvironmentOptions {
  /** The API key the CLI sends (default `"test-key"`). */
  apiKey?: string;
}

/** This folder, where the pinned CLIs and the package seeded into OpenCode's config folder are installed. */
const realClisFolder = fileURLToPath(new URL(".", import.meta.url));

/** The package OpenCode installs into its config folder when it is missing (see `seedOpenCodeConfigFolder`). */
const OPENCODE_CONFIG_PACKAGE = "@opencode-ai/plugin";

/** Switches that keep OpenCode from fetching model lists, updates, default plugins, LSP servers and share links. */
const OPENCODE_OFFLINE_SWITCHES: Record<string, string> = {
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_SHARE: "1",
};

function codexConfig(baseUrl: string): string {
  return [
    'model_provider = "standin"',
    'model = "gpt-5.5"',
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[features]",
    "plugins = false",
    "",
    "[model_providers.standin]",
    'name = "Stand-in"',
    `base_url = ${JSON.stringify(baseUrl)}`,
    'wire_api = "responses"',
    'env_key = "STANDIN_API_KEY"',
    "request_max_retries = 1",
    "stream_max_retries = 1",
    "",
  ].join("\n");
}

function openCodeConfig(baseUrl: string): unknown {
  return {
    $schema: "https://opencode.ai/config.json",
    model: "standin/standin-model",
    small_model: "standin/standin-model",
    autoupdate: false,
    share: "disabled",
    provider: {
      standin: {
        npm: "@ai-sdk/openai-compatible",
        name: "Stand-in",
        options: { baseURL: baseUrl, apiKey: "{env:STANDIN_API_KEY}" },
        // `reasoning` gives the model OpenCode's effort variants, so `--variant high` is sent as `reasoning_effort`.
        models: { "standin-model": { name: "Stand-in Model", tool_call: true, reasoning: true, limit: { context: 128000, output: 4096 } } },
      },
    },
  };
}

/**
 * OpenCode installs `@opencode-ai/plugin` into its config folder in the background on every run (fetching from the
 * npm registry, six attempts) until the folder has a `node_modules` and a `package-lock.json` whose root lists every
 * dependency of its `package.json` and that package. This seeds the state a first online run leaves, offline: the
 * package is a pinned dependency of test/real-clis (the version OpenCode asks for) and is linked, not copied.
 */
async function seedOpenCodeConfigFolder(configDir: string): Promise<void> {
  const lock = JSON.parse(await readFile(join(realClisFolder, "package-lock.json"), "utf8")) as { packages: Record<string, { version: string }> };
  const entry = lock.packages[`node_modules/${OPENCODE_CONFIG_PACKAGE}`];
  const installed = join(realClisFolder, "node_modules", OPENCODE_CONFIG_PACKAGE);
  if (entry === undefined || !existsSync(installed)) {
    throw new Error(`${OPENCODE_CONFIG_PACKAGE} is not installed in ${realClisFolder}; run \`node scripts/install-test-clis.mjs\``);
  }
  const dependencies = { [OPENCODE_CONFIG_PACKAGE]: entry.version };
  const seededLock = { lockfileVersion: 3, requires: true, packages: { "": { dependencies }, [`node_modules/${OPENCODE_CONFIG_PACKAGE}`]: entry } };
  await writeFile(join(configDir, "package.json"), `${JSON.stringify({ dependencies }, null, 2)}\n`);
  await writeFile(join(configDir, "package-lock.json"), `${JSON.stringify(seededLock, null, 2)}\n`);
  const link = join(configDir, "node_modules", OPENCODE_CONFIG_PACKAGE);
  await mkdir(dirname(link), { recursive: true });
  await symlink(installed, link, "dir");
}

/**
 * Creates a private HOME and TMPDIR under `folder` (an existing temp folder of the test), writes the configuration the
 * CLI needs to talk to `server` the way a user sets up a gateway, and returns only the variables to add to a clean
 * base environment. Nothing is written outside `folder`.
 */
export async function privateCliEnvironment(
  cli: RealCli,
  server: { url: string },
  folder: string,
  options: PrivateCliEnvironmentOptions = {},
): Promise<PrivateCliEnvironment> {
  const home = join(folder, "home");
  // Not an ancestor of CODEX_HOME: codex refuses to create its sandbox helper alias under TMPDIR.
  const tmpdir = join(folder, "tmp");
  await mkdir(home, { recursive: true });
  await mkdir(tmpdir, { recursive: true });
  const apiKey = options.apiKey ?? "test-key";
  const base = { HOME: home, TMPDIR: tmpdir };
  switch (cli) {
    case "claude":
      return {
        env: { ...base, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: apiKey, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
        home,
        tmpdir,
        stateDir: join(home, ".claude"),
      };
    case "codex": {
      const codexHome = join(home, ".codex");
      await mkdir(codexHome, { recursive: true });
      await writeFile(join(codexHome, "config.toml"), codexConfig(server.url));
      return { env: { ...base, CODEX_HOME: codexHome, STANDIN_API_KEY: apiKey }, home, tmpdir, stateDir: codexHome };
    }
    case "opencode": {
      const configDir = join(home, ".config", "opencode");
      await mkdir(configDir, { recursive: true });
      await writeFile(join(configDir, "opencode.json"), `${JSON.stringify(openCodeConfig(server.url), null, 2)}\n`);
      await seedOpenCodeConfigFolder(configDir);
      const xdg = {
        XDG_CONFIG_HOME: join(home, ".config"),
        XDG_DATA_HOME: join(home, ".local", "share"),
        XDG_STATE_HOME: join(home, ".local", "state"),
        XDG_CACHE_HOME: join(home, ".cache"),
      };
      return {
        env: { ...base, ...xdg, STANDIN_API_KEY: apiKey, ...OPENCODE_OFFLINE_SWITCHES },
        home,
        tmpdir,
        stateDir: join(xdg.XDG_DATA_HOME, "opencode"),
      };
    }
  }
}
