import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCore, type RunningCore } from "@pedelec/core/core-daemon";
import { runOpenCommand, type OpenCommandDependencies } from "./open-command.js";

const standInDir = fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url));

let home: string;
let env: NodeJS.ProcessEnv;
let core: RunningCore | undefined;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-open-"));
  env = { ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: standInDir };
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

/** Runs the command with a browser that only records what it was asked to open. */
async function open(args: string[], dependencies: OpenCommandDependencies = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const opened: string[] = [];
  const code = await runOpenCommand(args, { out: (line) => out.push(line), err: (line) => err.push(line), env }, {
    openUrl: async (url) => void opened.push(url),
    ...dependencies,
  });
  return { code, out: out.join("\n"), err: err.join("\n"), opened };
}

const PANEL_URL = /^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{43}\/$/;

describe("pedelec open", () => {
  it("prints the running Core's panel address and opens it in the browser", async () => {
    core = await startCore(env);
    const result = await open([]);
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(result.out).toMatch(PANEL_URL);
    expect(result.opened).toEqual([result.out]);
    expect((await readFile(join(home, "run", "control-panel.url"), "utf8")).trim()).toBe(result.out);
    const page = await fetch(result.out);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Pedelec control panel");
  });

  it("only prints with --print, and prints JSON with --json", async () => {
    core = await startCore(env);
    const printed = await open(["--print"]);
    expect(printed).toMatchObject({ code: 0, opened: [] });
    expect(printed.out).toMatch(PANEL_URL);
    const json = await open(["--print", "--json"]);
    expect(JSON.parse(json.out)).toEqual({ url: printed.out });
    expect(json.opened).toEqual([]);
    const jsonAndOpen = await open(["--json"]);
    expect(jsonAndOpen.opened).toEqual([printed.out]);
  });

  it("starts Core in the background first when it is not running, and waits for its panel", async () => {
    // A file left by a Core that was killed: not this Core's address.
    await mkdir(join(home, "run"), { recursive: true });
    const stale = "http://127.0.0.1:1/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/";
    await writeFile(join(home, "run", "control-panel.url"), `${stale}\n`);
    await utimes(join(home, "run", "control-panel.url"), new Date(1_600_000_000_000), new Date(1_600_000_000_000));
    const launched: string[] = [];
    const result = await open([], {
      launchCore: async (paths, launchEnv) => {
        launched.push(paths.home);
        core = await startCore(launchEnv);
      },
    });
    expect(launched).toEqual([home]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(PANEL_URL);
    expect(result.out).not.toBe(stale);
    expect(result.out).toBe(await core!.controlPanelUrl());
    expect(result.opened).toEqual([result.out]);
  });

  it("says so when Core does not come up", async () => {
    const result = await open(["--print"], { launchCore: async () => undefined });
    expect(result.code).toBe(1);
    expect(result.err).toContain("did not come up");
  }, 30_000);

  it("still prints the address when no browser can be opened, and fails", async () => {
    core = await startCore(env);
    const result = await open([], {
      openUrl: async () => {
        throw new Error("spawn xdg-open ENOENT");
      },
    });
    expect(result.code).toBe(1);
    expect(result.out).toMatch(PANEL_URL);
    expect(result.err).toContain("xdg-open ENOENT");
  });

  it("answers --help without touching Core, and refuses unknown options", async () => {
    const help = await open(["--help"]);
    expect(help).toMatchObject({ code: 0, opened: [] });
    expect(help.out).toContain("Usage: pedelec open");
    const unknown = await open(["--browser", "firefox"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("--browser");
  });
});
