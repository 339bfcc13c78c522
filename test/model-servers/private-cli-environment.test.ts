import { existsSync, readFileSync, realpathSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { privateCliEnvironment } from "../real-clis/cli-environment.js";
import { realCliVersion } from "../real-clis/real-clis.js";

let folder: string | undefined;
afterEach(async () => {
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  folder = undefined;
});

const server = { url: "http://127.0.0.1:4321/v1" };
const inside = (parent: string, child: string) => !relative(parent, child).startsWith("..");

describe("a private environment for a real CLI", () => {
  it("gives claude its own HOME and TMPDIR, the gateway URL and key, and no other traffic", async () => {
    folder = await mkdtemp(join(tmpdir(), "cli-environment-"));
    const homeBefore = process.env.HOME;
    const environment = await privateCliEnvironment("claude", { url: "http://127.0.0.1:4321" }, folder, { apiKey: "k-1" });
    expect(environment.env).toEqual({
      HOME: environment.home,
      TMPDIR: environment.tmpdir,
      ANTHROPIC_BASE_URL: "http://127.0.0.1:4321",
      ANTHROPIC_API_KEY: "k-1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    });
    expect(inside(folder, environment.home) && inside(folder, environment.tmpdir)).toBe(true);
    expect(environment.stateDir).toBe(join(environment.home, ".claude"));
    expect(process.env.HOME).toBe(homeBefore);
  });

  it("gives codex a CODEX_HOME outside TMPDIR with the stand-in provider configured", async () => {
    folder = await mkdtemp(join(tmpdir(), "cli-environment-"));
    const environment = await privateCliEnvironment("codex", server, folder);
    expect(Object.keys(environment.env).sort()).toEqual(["CODEX_HOME", "HOME", "STANDIN_API_KEY", "TMPDIR"]);
    expect(environment.env.STANDIN_API_KEY).toBe("test-key");
    expect(environment.stateDir).toBe(environment.env.CODEX_HOME);
    expect(inside(environment.tmpdir, environment.stateDir)).toBe(false);
    const config = readFileSync(join(environment.stateDir, "config.toml"), "utf8");
    for (const line of [
      'model_provider = "standin"',
      'model = "gpt-5.5"',
      "[analytics]\nenabled = false",
      "[features]\nplugins = false",
      "[model_providers.standin]",
      'base_url = "http://127.0.0.1:4321/v1"',
      'wire_api = "responses"',
      'env_key = "STANDIN_API_KEY"',
      "request_max_retries = 1",
      "stream_max_retries = 1",
    ]) {
      expect(config).toContain(line);
    }
  });

  it("gives opencode its config, its offline switches, and a config folder that needs no install", async () => {
    folder = await mkdtemp(join(tmpdir(), "cli-environment-"));
    const environment = await privateCliEnvironment("opencode", server, folder);
    const { env, home } = environment;
    expect(env).toMatchObject({
      HOME: home,
      STANDIN_API_KEY: "test-key",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_SHARE: "1",
    });
    expect(environment.stateDir).toBe(join(home, ".local", "share", "opencode"));
    const configDir = join(home, ".config", "opencode");
    const config = JSON.parse(readFileSync(join(configDir, "opencode.json"), "utf8"));
    expect(config).toMatchObject({
      model: "standin/standin-model",
      autoupdate: false,
      share: "disabled",
      provider: { standin: { npm: "@ai-sdk/openai-compatible", options: { baseURL: server.url, apiKey: "{env:STANDIN_API_KEY}" } } },
    });
    // What OpenCode checks before installing in the background: node_modules, and a lock listing the package.
    const lock = JSON.parse(readFileSync(join(configDir, "package-lock.json"), "utf8"));
    expect(Object.keys(lock.packages[""].dependencies)).toEqual(["@opencode-ai/plugin"]);
    const plugin = JSON.parse(readFileSync(join(configDir, "node_modules", "@opencode-ai", "plugin", "package.json"), "utf8"));
    expect(plugin.version).toBe(realCliVersion("opencode"));
    expect(realpathSync(join(configDir, "node_modules", "@opencode-ai", "plugin"))).toContain(join("test", "real-clis", "node_modules"));
    expect(existsSync(join(home, ".npm"))).toBe(false);
  });
});
