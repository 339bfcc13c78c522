// Discovery against the real codex CLI (pinned in test/real-clis), with a private CODEX_HOME per test.
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { realCliBinDir, realCliPath, realCliVersion } from "../../../../../test/real-clis/real-clis.js";
import { createDiscoveryRoot } from "../../testing/stand-in-discovery.js";
import { discoverProvider } from "../provider-discovery.js";
import { createCodexAdapter } from "./codex-adapter.js";

/** A model provider that takes its key from the environment, as a user sets up a gateway. */
const API_KEY_PROVIDER = `model_provider = "gateway"
[analytics]
enabled = false
[features]
plugins = false
[model_providers.gateway]
name = "Gateway"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
env_key = "GATEWAY_API_KEY"
`;

let root: string;
let env: Record<string, string>;
beforeEach(async () => {
  realCliPath("codex");
  ({ root, env } = await createDiscoveryRoot("pedelec-codex-discovery-", realCliBinDir, { CODEX_HOME: "codex-home", TMPDIR: "tmp" }));
  await mkdir(env.CODEX_HOME!);
  await mkdir(env.TMPDIR!);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const discover = (environment: Record<string, string>) => discoverProvider(createCodexAdapter(), environment, AbortSignal.timeout(20_000));

describe("codex discovery (real codex)", () => {
  it("says how to sign in when codex has neither a login nor a key", async () => {
    const discovery = await discover(env);
    expect(discovery).toMatchObject({ available: false, version: realCliVersion("codex"), executablePath: path.join(realCliBinDir, "codex") });
    expect(discovery.error).toMatch(/^codex is installed at .* but not signed in \(.+\): run `codex login`, or give its model provider a key\./);
  });

  it("is available for a model provider whose env_key is set, though `codex login status` says Not logged in", async () => {
    await writeFile(path.join(env.CODEX_HOME!, "config.toml"), API_KEY_PROVIDER);
    expect(await discover({ ...env, GATEWAY_API_KEY: "key-from-the-environment" })).toEqual({
      available: true,
      executablePath: path.join(realCliBinDir, "codex"),
      version: realCliVersion("codex"),
      error: null,
    });
  });

  it("names the missing variable of a model provider whose env_key is not set", async () => {
    await writeFile(path.join(env.CODEX_HOME!, "config.toml"), API_KEY_PROVIDER);
    const discovery = await discover(env);
    expect(discovery.available).toBe(false);
    expect(discovery.error).toContain("GATEWAY_API_KEY");
  });

  it("is available with OPENAI_API_KEY and codex's own provider", async () => {
    expect((await discover({ ...env, OPENAI_API_KEY: "sk-from-the-environment" })).available).toBe(true);
  });

  it("says codex is not installed, or not a codex it can read", async () => {
    expect((await discover({ ...env, PEDELEC_PROVIDER_PATH: path.join(root, "empty"), PATH: path.join(root, "empty") })).error).toBe(
      "codex is not installed or not on PATH",
    );
    const odd = path.join(root, "odd");
    await mkdir(odd);
    await writeFile(path.join(odd, "codex"), "#!/bin/sh\necho 'codex, the bright one'\n");
    await chmod(path.join(odd, "codex"), 0o755);
    expect((await discover({ ...env, PEDELEC_PROVIDER_PATH: odd })).error).toBe("codex --version failed: no version number in its output");
  });
});
