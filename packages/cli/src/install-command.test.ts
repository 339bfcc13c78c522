import { constants } from "node:fs";
import { access, chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { NATIVE_HOST_NAME } from "@pedelec/protocol/native-wire";
import type { BrowserId, HostPlatform } from "./browser-layouts.js";
import { runPedelecCommand } from "./pedelec-command.js";

// Every run gets its own user home, PEDELEC_HOME and "system root" (where /usr/bin, /opt and /Applications are looked
// up), so nothing of this machine's browsers or of the real ~ is seen or touched.
let home: string;
let pedelecHome: string;
let systemRoot: string;
beforeEach(async () => {
  const root = await mkdtemp(join(tmpdir(), "pedelec-install-"));
  home = join(root, "home");
  pedelecHome = join(root, "pedelec-home");
  systemRoot = join(root, "system");
  await mkdir(home);
  await mkdir(systemRoot);
});
afterEach(async () => {
  await rm(join(home, ".."), { recursive: true, force: true });
});

async function pedelecOn(platform: HostPlatform, env: NodeJS.ProcessEnv, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runPedelecCommand(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env: { PATH: "", HOME: home, PEDELEC_HOME: pedelecHome, PEDELEC_PROVIDER_PATH: join(systemRoot, "no-providers"), ...env },
    home,
    platform,
    systemRoot,
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const standInDir = fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url));

/** Where each browser reads per-user host manifests, spelled out rather than computed. */
const LINUX_FOLDERS: Partial<Record<BrowserId, string>> = {
  chrome: ".config/google-chrome",
  "chrome-beta": ".config/google-chrome-beta",
  "chrome-dev": ".config/google-chrome-unstable",
  chromium: ".config/chromium",
  edge: ".config/microsoft-edge",
  "edge-beta": ".config/microsoft-edge-beta",
  "edge-dev": ".config/microsoft-edge-dev",
  brave: ".config/BraveSoftware/Brave-Browser",
  "brave-beta": ".config/BraveSoftware/Brave-Browser-Beta",
  "brave-nightly": ".config/BraveSoftware/Brave-Browser-Nightly",
};
const MAC_FOLDERS: Record<BrowserId, string> = {
  chrome: "Library/Application Support/Google/Chrome",
  "chrome-beta": "Library/Application Support/Google/Chrome Beta",
  "chrome-dev": "Library/Application Support/Google/Chrome Dev",
  "chrome-canary": "Library/Application Support/Google/Chrome Canary",
  chromium: "Library/Application Support/Chromium",
  edge: "Library/Application Support/Microsoft Edge",
  "edge-beta": "Library/Application Support/Microsoft Edge Beta",
  "edge-dev": "Library/Application Support/Microsoft Edge Dev",
  brave: "Library/Application Support/BraveSoftware/Brave-Browser",
  "brave-beta": "Library/Application Support/BraveSoftware/Brave-Browser-Beta",
  "brave-nightly": "Library/Application Support/BraveSoftware/Brave-Browser-Nightly",
};

const manifestIn = (folder: string) => join(home, folder, "NativeMessagingHosts", `${NATIVE_HOST_NAME}.json`);

async function expectRegistered(file: string): Promise<void> {
  const manifest = JSON.parse(await readFile(file, "utf8")) as { name: string; path: string; type: string; allowed_origins: string[] };
  expect(manifest).toEqual({
    name: NATIVE_HOST_NAME,
    description: expect.any(String),
    path: join(pedelecHome, "bin", "pedelec-native-host"),
    type: "stdio",
    allowed_origins: [`chrome-extension://${DEFAULT_EXTENSION_ID}/`],
  });
  await access(manifest.path, constants.X_OK);
}

async function executable(path: string): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, "#!/bin/sh\n");
  await chmod(path, 0o755);
}

describe("pedelec install on Linux", () => {
  it("registers with every browser whose profile folder exists or whose executable is installed, and says which", async () => {
    await mkdir(join(home, LINUX_FOLDERS.chrome!), { recursive: true });
    await mkdir(join(home, LINUX_FOLDERS["brave-beta"]!), { recursive: true });
    await executable(join(systemRoot, "usr/bin/microsoft-edge"));
    await executable(join(systemRoot, "opt/brave.com/brave-nightly/brave"));
    const onPath = join(systemRoot, "elsewhere");
    await executable(join(onPath, "chromium-browser"));

    const result = await pedelecOn("linux", { PATH: onPath }, "install");
    expect(result.code).toBe(0);
    for (const id of ["chrome", "chromium", "edge", "brave-beta", "brave-nightly"] as const) {
      await expectRegistered(manifestIn(LINUX_FOLDERS[id]!));
      expect(result.out).toContain(manifestIn(LINUX_FOLDERS[id]!));
    }
    expect(result.out).toContain(`Found Microsoft Edge: ${join(systemRoot, "usr/bin/microsoft-edge")} is installed.`);
    expect(result.out).toContain(`Found Google Chrome: its profile folder ${join(home, LINUX_FOLDERS.chrome!)} exists.`);
    expect(result.out).toContain(`Found Chromium: ${join(onPath, "chromium-browser")} is installed.`);
    for (const id of ["chrome-beta", "chrome-dev", "edge-beta", "edge-dev", "brave"] as const) {
      await expect(access(manifestIn(LINUX_FOLDERS[id]!)), id).rejects.toThrow();
    }
  });

  it("registers with a named browser at its exact folder even when it is not found, for every Linux browser", async () => {
    for (const [id, folder] of Object.entries(LINUX_FOLDERS)) {
      const result = await pedelecOn("linux", {}, "install", "--browser", id);
      expect(result.code, id).toBe(0);
      await expectRegistered(manifestIn(folder));
    }
    const canary = await pedelecOn("linux", {}, "install", "--browser", "chrome-canary");
    expect(canary.code).toBe(2);
    expect(canary.err).toContain("no linux build");
  });

  it("follows XDG_CONFIG_HOME as the browsers do", async () => {
    const config = join(home, "elsewhere-config");
    await mkdir(join(config, "chromium"), { recursive: true });
    expect((await pedelecOn("linux", { XDG_CONFIG_HOME: config }, "install")).code).toBe(0);
    await expectRegistered(join(config, "chromium", "NativeMessagingHosts", `${NATIVE_HOST_NAME}.json`));
  });

  it("says clearly when no browser is found, what to do, and exits 1 having written nothing", async () => {
    const result = await pedelecOn("linux", {}, "install");
    expect(result.code).toBe(1);
    expect(result.err).toContain("No Chromium-family browser was found");
    expect(result.err).toContain("pedelec install --browser chrome");
    await expect(access(join(pedelecHome, "bin"))).rejects.toThrow();
    const json = await pedelecOn("linux", {}, "install", "--json");
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toMatchObject({
      ok: false,
      action: "install",
      browsers: [],
      error: expect.stringContaining("No Chromium-family browser"),
    });
  });

  it("uninstalls from every browser found and says so, leaving the others alone", async () => {
    await mkdir(join(home, LINUX_FOLDERS.chrome!), { recursive: true });
    await mkdir(join(home, LINUX_FOLDERS.edge!), { recursive: true });
    await pedelecOn("linux", {}, "install");
    const removed = await pedelecOn("linux", {}, "uninstall");
    expect(removed.code).toBe(0);
    expect(removed.out).toContain(`Removed ${manifestIn(LINUX_FOLDERS.chrome!)}`);
    expect(removed.out).toContain(`Removed ${manifestIn(LINUX_FOLDERS.edge!)}`);
    await expect(access(manifestIn(LINUX_FOLDERS.chrome!))).rejects.toThrow();
    await expect(access(manifestIn(LINUX_FOLDERS.edge!))).rejects.toThrow();
    expect((await pedelecOn("linux", {}, "uninstall", "--browser", "edge")).out).toContain("Nothing to remove");
  });

  it("reports install and uninstall as JSON on stdout, progress on stderr", async () => {
    await mkdir(join(home, LINUX_FOLDERS.brave!), { recursive: true });
    const installed = await pedelecOn("linux", { PEDELEC_PROVIDER_PATH: standInDir }, "install", "--json");
    expect(installed.code).toBe(0);
    expect(JSON.parse(installed.out)).toEqual({
      ok: true,
      action: "install",
      home: pedelecHome,
      hostLauncher: join(pedelecHome, "bin", "pedelec-native-host"),
      browsers: [
        {
          id: "brave",
          name: "Brave",
          manifestFile: manifestIn(LINUX_FOLDERS.brave!),
          registryKey: null,
          foundBecause: `its profile folder ${join(home, LINUX_FOLDERS.brave!)} exists`,
          ok: true,
          removed: null,
          error: null,
        },
      ],
      providers: expect.arrayContaining([{ provider: "claude", path: join(standInDir, "claude") }]),
      error: null,
    });
    expect(installed.err).toContain("Looking for Chromium-family browsers");
    expect(installed.err).toContain("Registering with Brave");
    const removed = JSON.parse((await pedelecOn("linux", {}, "uninstall", "--json")).out) as { browsers: { id: string; removed: boolean }[] };
    expect(removed.browsers).toMatchObject([{ id: "brave", removed: true }]);
  });

  it("refuses unknown browsers and two browsers for one --user-data-dir with exit 2", async () => {
    expect((await pedelecOn("linux", {}, "install", "--browser", "firefox")).code).toBe(2);
    const two = await pedelecOn("linux", {}, "install", "--user-data-dir", home, "--browser", "chrome", "--browser", "edge");
    expect(two.code).toBe(2);
    expect(two.err).toContain("at most one --browser");
  });
});

describe("pedelec install on macOS", () => {
  it("registers under ~/Library/Application Support for profile folders and apps found", async () => {
    await mkdir(join(home, MAC_FOLDERS["chrome-canary"]), { recursive: true });
    await mkdir(join(systemRoot, "Applications", "Microsoft Edge Dev.app"), { recursive: true });
    await mkdir(join(home, "Applications", "Brave Browser.app"), { recursive: true });
    const result = await pedelecOn("darwin", {}, "install");
    expect(result.code).toBe(0);
    for (const id of ["chrome-canary", "edge-dev", "brave"] as const) await expectRegistered(manifestIn(MAC_FOLDERS[id]));
    expect(result.out).toContain(`Found Microsoft Edge Dev: ${join(systemRoot, "Applications", "Microsoft Edge Dev.app")} is installed.`);
    await expect(access(manifestIn(MAC_FOLDERS.chrome))).rejects.toThrow();
  });

  it("registers with a named browser at its exact folder, for every macOS browser", async () => {
    for (const [id, folder] of Object.entries(MAC_FOLDERS)) {
      expect((await pedelecOn("darwin", {}, "install", "--browser", id)).code, id).toBe(0);
      await expectRegistered(manifestIn(folder));
    }
    const removed = await pedelecOn("darwin", {}, "uninstall", "--browser", "chrome-beta");
    expect(removed.out).toContain(`Removed ${manifestIn(MAC_FOLDERS["chrome-beta"])}`);
  });
});
