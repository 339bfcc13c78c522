import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCore, type RunningCore } from "@pedelec/core/core-daemon";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { NATIVE_HOST_NAME } from "@pedelec/protocol/native-wire";
import { extensionIdCheck, NODE_ENGINES_RANGE, nodeVersionCheck, type DoctorCheck } from "./doctor-checks.js";
import { runPedelecCommand } from "./pedelec-command.js";

const standInDir = fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url));
const repositoryPackage = fileURLToPath(new URL("../../../package.json", import.meta.url));

let root: string;
let home: string;
let pedelecHome: string;
let profile: string;
let core: RunningCore | undefined;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-doctor-"));
  home = join(root, "home");
  pedelecHome = join(root, "pedelec-home");
  profile = join(root, "profile");
  await mkdir(home);
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await rm(root, { recursive: true, force: true });
});

function environment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    PEDELEC_HOME: pedelecHome,
    PEDELEC_PROVIDER_PATH: standInDir,
    CLAUDE_CONFIG_DIR: join(root, "claude-state"),
    ...extra,
  };
}

/** Doctor may start Core; here it starts one in this process (stopped after the test) instead of a detached one. */
const startCoreHere = (env: NodeJS.ProcessEnv) => async (): Promise<number> => {
  core = await startCore(env);
  return process.pid;
};

async function pedelec(env: NodeJS.ProcessEnv, argv: string[], launchCore?: () => Promise<number>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runPedelecCommand(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env,
    home,
    platform: "linux",
    systemRoot: join(root, "system"),
    launchCore: launchCore ?? (() => Promise.reject(new Error("this test does not expect Core to be started"))),
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

async function doctor(env: NodeJS.ProcessEnv, extra: string[] = [], launchCore?: () => Promise<number>) {
  const result = await pedelec(env, ["doctor", "--json", "--user-data-dir", profile, ...extra], launchCore ?? startCoreHere(env));
  const report = JSON.parse(result.out) as { ok: boolean; checks: DoctorCheck[] };
  const check = (name: string): DoctorCheck => {
    const found = report.checks.find((each) => each.name === name);
    if (found === undefined) throw new Error(`no check named ${name}: ${report.checks.map((each) => each.name).join(", ")}`);
    return found;
  };
  return { ...result, report, check };
}

const HOST = "native host for Chromium";

describe("pedelec doctor", () => {
  it("passes every check on a healthy set-up, in the order a request travels, as exactly the documented JSON", async () => {
    const env = environment();
    expect((await pedelec(env, ["install", "--user-data-dir", profile])).code).toBe(0);
    core = await startCore(env);
    const { code, report, err } = await doctor(env);
    expect(report.checks.filter((check) => !check.ok)).toEqual([]);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    for (const check of report.checks) {
      expect(Object.keys(check)).toEqual(["name", "ok", "detail", "fix"]);
      expect(check.fix).toBeNull();
      expect(check.detail.length).toBeGreaterThan(0);
    }
    const names = report.checks.map((check) => check.name);
    expect(names.slice(0, 5)).toEqual(["Node.js", "Chromium-family browser", HOST, "extension id", "Core"]);
    expect(names).toEqual(
      expect.arrayContaining([
        "PEDELEC_HOME permissions",
        "run folder permissions",
        "keys folder permissions",
        "Core socket permissions",
        "asset server",
        "provider Claude Code",
        "an agent to work with",
        "pinned Deno",
        "bubblewrap",
      ]),
    );
    expect(names.indexOf("asset server")).toBeLessThan(names.indexOf("provider Claude Code"));
    expect(report.checks.find((check) => check.name === "asset server")?.detail).toMatch(
      /refused an unknown ticket with 403 ASSET_DOWNLOAD_UNAUTHORIZED/,
    );
    expect(report.checks.find((check) => check.name === "provider Claude Code")?.detail).toContain("2.1.332");
    // Progress went to stderr, so stdout held only the JSON.
    expect(err).toContain("agent CLIs");
  });

  it("prints one line per check with a tick, and exits 0", async () => {
    const env = environment();
    await pedelec(env, ["install", "--user-data-dir", profile]);
    core = await startCore(env);
    const result = await pedelec(env, ["doctor", "--user-data-dir", profile]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^✓ Node\.js: v\d+/m);
    expect(result.out).toMatch(/^✓ Core: Core .+ answers ping/m);
    expect(result.out).not.toContain("✗");
    expect(result.out).toMatch(/All \d+ checks passed\./);
  });

  it("starts Core when it is not running, as the native host would, and reports it", async () => {
    const env = environment();
    await pedelec(env, ["install", "--user-data-dir", profile]);
    let launched = 0;
    const { check, code } = await doctor(env, [], async () => {
      launched += 1;
      return startCoreHere(env)();
    });
    expect(launched).toBe(1);
    expect(check("Core")).toMatchObject({ ok: true, detail: expect.stringContaining("started Core") });
    expect(code).toBe(0);
  });

  it("reports an invalid settings.json as a failing check with its fix, in the JSON", async () => {
    const env = environment();
    await pedelec(env, ["install", "--user-data-dir", profile]);
    await mkdir(pedelecHome, { recursive: true, mode: 0o700 });
    const settingsFile = join(pedelecHome, "settings.json");
    await writeFile(settingsFile, JSON.stringify({ providers: { claude: {} } }));
    const { code, report, check, err } = await doctor(env);
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(check("settings")).toMatchObject({
      ok: false,
      detail: expect.stringContaining(`${settingsFile} is invalid`),
      fix: expect.stringContaining(`mv '${settingsFile}'`),
    });
    expect(report.checks.filter((each) => !each.ok).map((each) => each.name)).toEqual(["settings"]);
    // The provider checks still ran, on the defaults.
    expect(check("provider Claude Code").ok).toBe(true);
    expect(err).not.toMatch(/INVALID_INPUT/);
  });

  it("names the fix for a damaged Full Access key; Core still comes up", async () => {
    const env = environment();
    await pedelec(env, ["install", "--user-data-dir", profile]);
    const keyFile = join(pedelecHome, "keys", "full-access.key");
    await mkdir(join(pedelecHome, "keys"), { recursive: true, mode: 0o700 });
    await writeFile(keyFile, "", { mode: 0o600 });
    const { code, report, check } = await doctor(env);
    expect(code).toBe(1);
    expect(check("Core").ok).toBe(true);
    expect(check("Full Access key")).toMatchObject({
      ok: false,
      detail: expect.stringContaining("damaged"),
      fix: expect.stringContaining(`rm '${keyFile}' && pedelec stop && pedelec start --detach`),
    });
    expect(report.checks.filter((each) => !each.ok).map((each) => each.name)).toEqual(["Full Access key"]);
  });

  it("names the fix when no host manifest is registered", async () => {
    const { code, report, check } = await doctor(environment());
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(check(HOST)).toEqual({
      name: HOST,
      ok: false,
      detail: `no manifest at ${join(profile, "NativeMessagingHosts", `${NATIVE_HOST_NAME}.json`)}`,
      fix: `run \`pedelec install --browser chromium --user-data-dir '${profile}'\``,
    });
  });

  it("names the fix when the manifest points at a launcher that is gone", async () => {
    const env = environment();
    await pedelec(env, ["install", "--user-data-dir", profile]);
    await rm(join(pedelecHome, "bin", "pedelec-native-host"));
    const { code, check } = await doctor(env);
    expect(code).toBe(1);
    expect(check(HOST).detail).toBe(`the host launcher ${join(pedelecHome, "bin", "pedelec-native-host")} is missing or not executable`);
    expect(check(HOST).fix).toContain("pedelec install --browser chromium");
  });

  it("names the fix when the manifest allows another extension, or is not JSON", async () => {
    const env = environment();
    await pedelec(env, ["install", "--user-data-dir", profile]);
    const file = join(profile, "NativeMessagingHosts", `${NATIVE_HOST_NAME}.json`);
    const manifest = JSON.parse(await readFile(file, "utf8")) as { allowed_origins: string[] };
    manifest.allowed_origins = ["chrome-extension://abcdefghijklmnopabcdefghijklmnop/"];
    await writeFile(file, JSON.stringify(manifest));
    const wrongId = await doctor(env);
    expect(wrongId.code).toBe(1);
    expect(wrongId.check(HOST).detail).toContain(`does not allow the Pedelec extension ${DEFAULT_EXTENSION_ID}`);
    expect(wrongId.check(HOST).fix).toContain("pedelec install");
    await core?.stop();
    core = undefined;

    await writeFile(file, "{ not json");
    expect((await doctor(env)).check(HOST).detail).toBe(`${file} is not valid JSON`);
  });

  it("says when Core cannot start because its run folder cannot be created, without trying to start it", async () => {
    await mkdir(pedelecHome);
    await writeFile(join(pedelecHome, "run"), "a file where Core's folder should be");
    const { code, check } = await doctor(environment(), [], () => Promise.reject(new Error("must not be started")));
    expect(code).toBe(1);
    expect(check("Core").ok).toBe(false);
    expect(check("Core").detail).toContain(`cannot create ${join(pedelecHome, "run")}`);
    expect(check("Core").fix).toContain("PEDELEC_HOME");
    expect(check("run folder permissions")).toMatchObject({ ok: false, detail: expect.stringContaining("is not a folder") });
  });

  it("says when Core cannot listen because its socket path is a folder", async () => {
    await mkdir(join(pedelecHome, "run", "core.sock"), { recursive: true });
    const { code, check } = await doctor(environment(), [], () => Promise.reject(new Error("must not be started")));
    expect(code).toBe(1);
    expect(check("Core")).toEqual({
      name: "Core",
      ok: false,
      detail: `${join(pedelecHome, "run", "core.sock")} is a folder, so Core cannot listen there`,
      fix: `remove it (\`rm -r '${join(pedelecHome, "run", "core.sock")}'\`) and run \`pedelec doctor\` again`,
    });
  });

  it("says at once when the Core it started exits, quoting the last line of its log", async () => {
    const env = environment();
    const launch = async (): Promise<number> => {
      await mkdir(join(pedelecHome, "logs"), { recursive: true });
      await writeFile(join(pedelecHome, "logs", "core.log"), '{"level":"error","message":"Core could not listen"}\n');
      const child = spawn(process.execPath, ["-e", "process.exit(3)"], { stdio: "ignore" });
      await new Promise((resolve) => child.once("exit", resolve));
      return child.pid!;
    };
    const started = Date.now();
    const { check } = await doctor(env, [], launch);
    expect(check("Core").ok).toBe(false);
    expect(check("Core").detail).toMatch(/exited before answering: \{"level":"error","message":"Core could not listen"\}/);
    expect(check("Core").fix).toBe(`see ${join(pedelecHome, "logs", "core.log")}`);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("fails the default provider when it is not installed, with how to install it, but not the others", async () => {
    const env = environment();
    await pedelec(env, ["install", "--user-data-dir", profile]);
    expect((await pedelec(env, ["config", "set", "defaultProvider", "codex"])).code).toBe(0);
    const { code, check } = await doctor(env);
    expect(code).toBe(1);
    expect(check("provider Codex")).toMatchObject({ ok: false, detail: expect.stringContaining("(the default provider)") });
    expect(check("provider Codex").fix).toContain("npm install -g @openai/codex");
    expect(check("provider OpenCode")).toMatchObject({ ok: true, detail: expect.stringMatching(/^not used: /) });
    expect(check("an agent to work with")).toMatchObject({ ok: true, detail: "available: Claude Code" });
  });

  it("fails when no agent CLI at all is available, listing how to install each", async () => {
    const env = environment({ PEDELEC_PROVIDER_PATH: join(root, "nothing-here"), PATH: "/usr/bin:/bin" });
    await pedelec(env, ["install", "--user-data-dir", profile]);
    const { check } = await doctor(env);
    const none = check("an agent to work with");
    expect(none.ok).toBe(false);
    expect(none.fix).toContain("npm install -g @anthropic-ai/claude-code");
    expect(none.fix).toContain("curl https://cursor.com/install -fsS | bash");
  });

  it("finds no browser in an empty home and says how to get one", async () => {
    const env = environment({ PATH: join(root, "empty") });
    const result = await pedelec(env, ["doctor", "--json"], startCoreHere(env));
    const browsers = (JSON.parse(result.out) as { checks: DoctorCheck[] }).checks.find((check) => check.name === "Chromium-family browser");
    expect(browsers).toMatchObject({ ok: false, fix: expect.stringContaining("apt-get install -y chromium") });
  });
});

describe("doctor's single checks", () => {
  it("keeps the Node.js lines equal to the repository's engines field", async () => {
    const engines = (JSON.parse(await readFile(repositoryPackage, "utf8")) as { engines: { node: string } }).engines.node;
    expect(engines).toBe(NODE_ENGINES_RANGE);
    expect(NODE_ENGINES_RANGE).toBe("^20.19.0 || ^22.13.0 || ^24.0.0 || ^26.0.0");
    for (const version of ["v20.19.0", "v20.20.2", "v22.13.0", "v22.23.5", "v24.0.0", "v24.22.3", "v26.12.1"]) {
      expect(nodeVersionCheck(version).ok).toBe(true);
    }
    expect(nodeVersionCheck("v20.18.3")).toMatchObject({ ok: false, fix: expect.stringContaining("20.19.0") });
    expect(nodeVersionCheck("v22.12.0")).toMatchObject({ ok: false, fix: expect.stringContaining("22.13.0") });
    expect(nodeVersionCheck("v23.11.0")).toMatchObject({ ok: false, detail: expect.stringContaining("not a Node.js line Pedelec supports") });
    expect(nodeVersionCheck("v18.20.0").ok).toBe(false);
    expect(nodeVersionCheck("v28.0.0").ok).toBe(false);
  });

  it("derives the extension id from the built manifest's key and names the fix when it differs", async () => {
    await mkdir(root, { recursive: true });
    const manifest = join(root, "manifest.json");
    // Any other DER bytes give another id.
    await writeFile(manifest, JSON.stringify({ key: Buffer.from("not the Pedelec key").toString("base64") }));
    const wrong = await extensionIdCheck(manifest, DEFAULT_EXTENSION_ID);
    expect(wrong.ok).toBe(false);
    expect(wrong.detail).toContain(`but the host is registered for ${DEFAULT_EXTENSION_ID}`);
    expect(wrong.fix).toMatch(/npm run build|--extension-id [a-p]{32}/);
    const missing = await extensionIdCheck(join(root, "absent.json"), DEFAULT_EXTENSION_ID);
    expect(missing).toMatchObject({ ok: false, fix: "run `npm run build` in the Pedelec folder" });
  });
});
