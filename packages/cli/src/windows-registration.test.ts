import { describe, expect, it } from "vitest";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { NATIVE_HOST_NAME } from "@pedelec/protocol/native-wire";
import type { RegistrationStep, StepRunner } from "./host-registration.js";
import { runPedelecCommand } from "./pedelec-command.js";

const PROFILE = "C:\\Users\\ada";
const LOCAL = "C:\\Users\\ada\\AppData\\Local";
const PEDELEC_HOME = "C:\\Users\\ada\\.pedelec";
const ROOT = `${LOCAL}\\Pedelec`;
const HOST_CMD = `${ROOT}\\bin\\pedelec-native-host.cmd`;

/** A runner that only writes down what it was asked to do. */
function recordingRunner(options: { failingCommands?: boolean } = {}): StepRunner & { steps: RegistrationStep[] } {
  const steps: RegistrationStep[] = [];
  return {
    steps,
    async makeFolder(path, mode) {
      steps.push({ kind: "make-folder", path, mode });
    },
    async writeFile(path, content, mode) {
      steps.push({ kind: "write-file", path, content, mode });
    },
    async removeFile(path) {
      steps.push({ kind: "remove-file", path });
      return true;
    },
    async run(command, args) {
      steps.push({ kind: "run", command, args });
      return options.failingCommands ? { exitCode: 1, output: "ERROR: Access is denied." } : { exitCode: 0, output: "" };
    },
    async exists() {
      return false;
    },
  };
}

async function pedelecOnWindows(runner: StepRunner, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runPedelecCommand(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env: { LOCALAPPDATA: LOCAL, PEDELEC_HOME, USERNAME: "ada", PATH: "" },
    home: PROFILE,
    platform: "win32",
    stepRunner: runner,
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const REGISTRY_KEYS = {
  chrome: `HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`,
  chromium: `HKCU\\Software\\Chromium\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`,
  edge: `HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`,
  brave: `HKCU\\Software\\BraveSoftware\\Brave-Browser\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`,
};

describe("pedelec install on Windows (computed, carried out by a recording runner)", () => {
  it("writes .cmd launchers under %LOCALAPPDATA%\\Pedelec\\bin, one manifest per vendor, and points each vendor's HKCU key at it", async () => {
    const runner = recordingRunner();
    const result = await pedelecOnWindows(
      runner,
      "install",
      "--browser",
      "chrome",
      "--browser",
      "chromium",
      "--browser",
      "edge",
      "--browser",
      "brave",
    );
    expect(result.code).toBe(0);

    const launchers = runner.steps.filter((step) => step.kind === "write-file" && step.path.endsWith(".cmd"));
    expect(launchers.map((step) => step.kind === "write-file" && step.path).sort()).toEqual(
      ["pedelec-agent", "pedelec-cli", "pedelec-deno", "pedelec-native-host", "pedelec-ts-runtime"].map((program) => `${ROOT}\\bin\\${program}.cmd`),
    );
    const host = launchers.find((step) => step.kind === "write-file" && step.path === HOST_CMD);
    const lines = host?.kind === "write-file" ? host.content.split("\r\n") : [];
    expect(lines.slice(0, 2)).toEqual(["@echo off", `set "PEDELEC_HOME=${PEDELEC_HOME}"`]);
    expect(lines[2]).toMatch(/^".+" ".+native-host.+" %\*$/);

    for (const [id, key] of Object.entries(REGISTRY_KEYS)) {
      const manifestFile = `${ROOT}\\NativeMessagingHosts\\${id}\\${NATIVE_HOST_NAME}.json`;
      const written = runner.steps.find((step) => step.kind === "write-file" && step.path === manifestFile);
      expect(written, id).toBeDefined();
      expect(JSON.parse(written?.kind === "write-file" ? written.content : "{}")).toEqual({
        name: NATIVE_HOST_NAME,
        description: expect.any(String),
        path: HOST_CMD,
        type: "stdio",
        allowed_origins: [`chrome-extension://${DEFAULT_EXTENSION_ID}/`],
      });
      expect(runner.steps).toContainEqual({ kind: "run", command: "reg", args: ["add", key, "/ve", "/t", "REG_SZ", "/d", manifestFile, "/f"] });
      // The key is written after the file it names.
      const fileIndex = runner.steps.indexOf(written!);
      const keyIndex = runner.steps.findIndex((step) => step.kind === "run" && step.args[1] === key);
      expect(keyIndex).toBeGreaterThan(fileIndex);
      expect(result.out).toContain(`${key} → ${manifestFile}`);
    }
    // Nothing else: no folders of the Linux layout, no other commands.
    expect(runner.steps.filter((step) => step.kind === "run")).toHaveLength(4);
    expect(runner.steps.some((step) => step.kind === "make-folder")).toBe(false);
  });

  it("uninstalls by deleting the key, then the manifest", async () => {
    const runner = recordingRunner();
    const result = await pedelecOnWindows(runner, "uninstall", "--browser", "edge");
    expect(result.code).toBe(0);
    expect(runner.steps).toEqual([
      { kind: "run", command: "reg", args: ["delete", REGISTRY_KEYS.edge, "/f"] },
      { kind: "remove-file", path: `${ROOT}\\NativeMessagingHosts\\edge\\${NATIVE_HOST_NAME}.json` },
    ]);
  });

  it("reports a registry command that fails, with its output, and exits 1", async () => {
    const result = await pedelecOnWindows(recordingRunner({ failingCommands: true }), "install", "--browser", "brave", "--json");
    expect(result.code).toBe(1);
    const report = JSON.parse(result.out) as { ok: boolean; browsers: { id: string; ok: boolean; registryKey: string; error: string }[] };
    expect(report.ok).toBe(false);
    expect(report.browsers).toEqual([
      expect.objectContaining({ id: "brave", ok: false, registryKey: REGISTRY_KEYS.brave, error: expect.stringContaining("Access is denied") }),
    ]);
  });

  it("has one registration per vendor: channel ids and --user-data-dir are refused", async () => {
    for (const argv of [
      ["--browser", "chrome-beta"],
      ["--browser", "edge-dev"],
      ["--user-data-dir", "C:\\profile"],
    ]) {
      const refused = await pedelecOnWindows(recordingRunner(), "install", ...argv);
      expect(refused.code, argv.join(" ")).toBe(2);
    }
  });
});

describe("Core's named pipe on Windows", () => {
  const pipeOf = (home: string, user: string) => resolveCorePaths({ PEDELEC_HOME: home, USERNAME: user }, "win32").socketPath;

  it("is a pipe named for the user and a digest of the home", () => {
    expect(pipeOf(PEDELEC_HOME, "ada")).toMatch(/^\\\\\.\\pipe\\pedelec-core-ada-[0-9a-f]{16}$/);
    expect(resolveCorePaths({ PEDELEC_HOME, USERNAME: "ada" }, "win32")).toMatchObject({
      home: PEDELEC_HOME,
      runDir: `${PEDELEC_HOME}\\run`,
      settingsFile: `${PEDELEC_HOME}\\settings.json`,
    });
  });

  it("differs between users and between homes, and ignores the case of the home as Windows does", () => {
    const pipe = pipeOf(PEDELEC_HOME, "ada");
    expect(pipeOf(PEDELEC_HOME, "grace")).not.toBe(pipe);
    expect(pipeOf("C:\\Users\\ada\\.pedelec-test", "ada")).not.toBe(pipe);
    expect(pipeOf("c:\\users\\ADA\\.Pedelec", "ada")).toBe(pipe);
    expect(pipeOf(PEDELEC_HOME, "Ada")).toBe(pipe);
  });

  it("stays a socket file under run/ elsewhere", () => {
    expect(resolveCorePaths({ PEDELEC_HOME: "/tmp/pedelec-x" }, "linux").socketPath).toBe("/tmp/pedelec-x/run/core.sock");
  });
});
