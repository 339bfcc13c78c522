import { chmod, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
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
  const code = await runOpenCommand(
    args,
    { out: (line) => out.push(line), err: (line) => err.push(line), env },
    {
      openUrl: async (url) => void opened.push(url),
      ...dependencies,
    },
  );
  return { code, out: out.join("\n"), err: err.join("\n"), opened };
}

/** The panel's own address, for a browser that signed in: no secret, no code. */
const PANEL_URL = /^http:\/\/127\.0\.0\.1:\d+\/panel\/$/;
/** What the browser is sent: a one-time code, never the long-lived secret. */
const SIGN_IN_URL = /^http:\/\/127\.0\.0\.1:\d+\/sign-in\/[A-Za-z0-9_-]{43}$/;

/** The long-lived secret in the running Core's 0600 address file. */
async function panelSecret(): Promise<string> {
  return new URL((await readFile(join(home, "run", "control-panel.url"), "utf8")).trim()).pathname.split("/")[1]!;
}

/** Signs in as a browser would: follows the link by hand and keeps the cookie. */
async function signInWith(link: string): Promise<{ status: number; cookie: string | null; location: string | null }> {
  const answer = await fetch(link, { redirect: "manual" });
  return { status: answer.status, cookie: answer.headers.get("set-cookie")?.split(";")[0] ?? null, location: answer.headers.get("location") };
}

describe("pedelec open", () => {
  it("opens a one-time sign-in link in the browser and prints the panel's clean address", async () => {
    core = await startCore(env);
    const result = await open([]);
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(result.out).toMatch(PANEL_URL);
    expect(result.opened).toHaveLength(1);
    const [link] = result.opened as [string];
    expect(link).toMatch(SIGN_IN_URL);
    const secret = await panelSecret();
    expect(link).not.toContain(secret);
    expect(result.out).not.toContain(secret);

    const signedIn = await signInWith(link);
    expect(signedIn).toMatchObject({ status: 303, location: "/panel/" });
    const page = await fetch(result.out, { headers: { cookie: signedIn.cookie! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Pedelec control panel");
    // Without the cookie the clean address is nothing.
    expect((await fetch(result.out)).status).toBe(404);
  });

  it("never puts the secret in the opener's argv or environment, and the code it does put there works once", async () => {
    core = await startCore(env);
    // A stand-in for xdg-open that records its own /proc/<pid>/cmdline and environ, as `ps` shows them to other users.
    const opener = join(home, "record-opener.sh");
    const record = join(home, "opener-record");
    await writeFile(
      opener,
      `#!/bin/sh\ntr '\\0' '\\n' < /proc/$$/cmdline > "${record}.cmdline"\ntr '\\0' '\\n' < /proc/$$/environ > "${record}.environ"\nmv "${record}.cmdline" "${record}.done"\n`,
    );
    await chmod(opener, 0o700);
    const result = await open([], { openUrl: undefined, opener: [opener] });
    expect(result).toMatchObject({ code: 0, opened: [] });
    const deadline = Date.now() + 10_000;
    let argv: string[] | undefined;
    while (argv === undefined) {
      argv = await readFile(`${record}.done`, "utf8").then(
        (text) => text.split("\n").filter((line) => line !== ""),
        () => undefined,
      );
      if (argv === undefined && Date.now() > deadline) throw new Error("the opener did not run");
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 20));
    }
    const environ = await readFile(`${record}.environ`, "utf8");
    const secret = await panelSecret();
    expect(argv.some((argument) => argument.includes(secret))).toBe(false);
    expect(environ).not.toContain(secret);
    const link = argv.at(-1)!;
    expect(link).toMatch(SIGN_IN_URL);

    // The code in argv: good once, and whoever uses it a second time (someone who read `ps`) gets nothing.
    const first = await signInWith(link);
    expect(first.status).toBe(303);
    const second = await signInWith(link);
    expect(second).toMatchObject({ status: 403, cookie: null });
    // …and closes the session the first use opened, so a race against the browser is found out, not silent.
    expect((await fetch(result.out, { headers: { cookie: first.cookie! } })).status).toBe(404);
  });

  it("only prints a one-time link with --print, and prints JSON with --json", async () => {
    core = await startCore(env);
    const printed = await open(["--print"]);
    expect(printed).toMatchObject({ code: 0, opened: [] });
    expect(printed.out).toMatch(SIGN_IN_URL);
    expect(printed.out).not.toContain(await panelSecret());
    const json = await open(["--print", "--json"]);
    const answer = JSON.parse(json.out) as { url: string; expiresAt: string };
    expect(answer.url).toMatch(SIGN_IN_URL);
    expect(answer.url).not.toBe(printed.out);
    expect(Date.parse(answer.expiresAt)).toBeGreaterThan(Date.now());
    expect(json.opened).toEqual([]);
    const jsonAndOpen = await open(["--json"]);
    expect(JSON.parse(jsonAndOpen.out)).toEqual({ url: expect.stringMatching(PANEL_URL) });
    expect(jsonAndOpen.opened).toEqual([expect.stringMatching(SIGN_IN_URL)]);
    expect((await signInWith(printed.out)).status).toBe(303);
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
    expect(new URL(result.out).port).toBe(new URL((await core!.controlPanelUrl())!).port);
    expect(result.opened).toEqual([expect.stringMatching(SIGN_IN_URL)]);
    expect(new URL(result.opened[0]!).port).not.toBe("1");
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
    expect(result.err).toContain("pedelec open --print");
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
