import { execFile } from "node:child_process";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { discoverProvider } from "../provider-discovery.js";
import { createDiscoveryRoot } from "../../testing/stand-in-discovery.js";
import { createCodexAdapter } from "./codex-adapter.js";

const STAND_IN_DIRECTORY = fileURLToPath(new URL("../../../../../test/stand-ins/codex", import.meta.url));

let root: string;
let env: Record<string, string>;
beforeEach(async () => {
  ({ root, env } = await createDiscoveryRoot("pedelec-codex-discovery-", STAND_IN_DIRECTORY, { CODEX_HOME: "codex-state" }));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const discover = (environment: Record<string, string>) => discoverProvider(createCodexAdapter(), environment, AbortSignal.timeout(10_000));

describe("codex discovery", () => {
  it("is available when codex answers its version and `codex login status` says signed in", async () => {
    expect(await discover(env)).toEqual({
      available: true,
      executablePath: path.join(STAND_IN_DIRECTORY, "codex"),
      version: "0.171.0",
      error: null,
    });
  });

  it("says who to ask when codex is installed but signed out", async () => {
    await promisify(execFile)(path.join(STAND_IN_DIRECTORY, "codex"), ["logout"], { env });
    const discovery = await discover(env);
    expect(discovery).toMatchObject({ available: false, version: "0.171.0" });
    expect(discovery.error).toBe(`codex is installed at ${path.join(STAND_IN_DIRECTORY, "codex")} but not signed in: run \`codex login\``);
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
