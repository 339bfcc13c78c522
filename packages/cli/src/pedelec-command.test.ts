import { mkdtemp, readFile, rm, stat, access } from "node:fs/promises";
import { constants } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { NATIVE_HOST_NAME } from "@pedelec/protocol/native-wire";
import { CORE_VERSION } from "@pedelec/core-client/core-version";
import { startCore } from "@pedelec/core/core-daemon";
import { isProcessRunning } from "@pedelec/core/process-stat";
import type { ValueInput } from "./config-value-input.js";
import { runPedelecCommand } from "./pedelec-command.js";

let home: string;
let profile: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-cli-home-"));
  profile = await mkdtemp(join(tmpdir(), "pedelec-cli-profile-"));
});
afterEach(async () => {
  // A Core that lost a start race may still be writing its last lines into run/ as it exits on its own.
  await rm(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  await rm(profile, { recursive: true, force: true });
});

const standInDir = fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url));

async function pedelecWith(env: NodeJS.ProcessEnv, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runPedelecCommand(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env: { ...process.env, PEDELEC_HOME: home, ...env },
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}
const pedelec = (...argv: string[]) => pedelecWith({}, ...argv);

/** Runs a command with `stdin` as its standard input (a pipe, or a stand-in terminal). */
async function pedelecReading(stdin: ValueInput, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runPedelecCommand(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env: { ...process.env, PEDELEC_HOME: home },
    stdin,
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** A terminal that types `keys` once it is in raw mode, and records what the command echoes. */
function fakeTerminal(keys: string): ValueInput & { rawModes: boolean[] } {
  const emitter = new EventEmitter();
  const rawModes: boolean[] = [];
  return {
    isTTY: true,
    rawModes,
    setRawMode: (raw: boolean) => {
      rawModes.push(raw);
      if (raw) setTimeout(() => emitter.emit("data", Buffer.from(keys)), 5);
    },
    on: (event, listener) => emitter.on(event, listener),
    off: (event, listener) => emitter.off(event, listener),
    resume: () => undefined,
    pause: () => undefined,
    [Symbol.asyncIterator]: () => {
      throw new Error("a terminal is read in raw mode, not as a stream");
    },
  };
}

describe("pedelec install / uninstall", () => {
  it("writes a host manifest with an absolute executable and our extension id, and prints where", async () => {
    const result = await pedelec("install", "--browser", "chromium", "--user-data-dir", profile);
    const file = join(profile, "NativeMessagingHosts", `${NATIVE_HOST_NAME}.json`);
    expect(result.code).toBe(0);
    expect(result.out).toContain(file);
    const manifest = JSON.parse(await readFile(file, "utf8")) as { path: string; allowed_origins: string[]; type: string; name: string };
    expect(manifest).toMatchObject({ name: NATIVE_HOST_NAME, type: "stdio", allowed_origins: [`chrome-extension://${DEFAULT_EXTENSION_ID}/`] });
    expect(manifest.path).toBe(join(home, "bin", "pedelec-native-host"));
    await access(manifest.path, constants.X_OK);
    expect((await stat(join(home, "bin", "pedelec-cli"))).mode & 0o111).not.toBe(0);
  });

  it("pins the installed home in its launchers, whatever PEDELEC_HOME the browser's environment has", async () => {
    await pedelec("install", "--user-data-dir", profile);
    for (const program of ["pedelec-native-host", "pedelec-cli"]) {
      const launcher = await readFile(join(home, "bin", program), "utf8");
      const lines = launcher.split("\n");
      expect(lines.slice(0, 3)).toEqual(["#!/bin/sh", `PEDELEC_HOME='${home}'`, "export PEDELEC_HOME"]);
      expect(lines[3]).toMatch(/^exec '.+' '.+' "\$@"$/);
    }
  });

  it("records where each provider's executable is, for a Core the browser starts with a bare environment", async () => {
    const result = await pedelecWith({ PEDELEC_PROVIDER_PATH: standInDir }, "install", "--user-data-dir", profile);
    expect(result.out).toContain(`Provider claude: ${join(standInDir, "claude")}`);
    const settings = JSON.parse(await readFile(join(home, "settings.json"), "utf8")) as { providers?: unknown };
    expect(settings.providers).toEqual({ claude: { path: join(standInDir, "claude") } });
    expect((await stat(join(home, "settings.json"))).mode & 0o777).toBe(0o600);
  });

  it("adds extra extension ids and refuses malformed ones", async () => {
    const extra = "abcdefghijklmnopabcdefghijklmnop";
    expect((await pedelec("install", "--user-data-dir", profile, "--extension-id", extra)).code).toBe(0);
    const manifest = JSON.parse(await readFile(join(profile, "NativeMessagingHosts", `${NATIVE_HOST_NAME}.json`), "utf8")) as {
      allowed_origins: string[];
    };
    expect(manifest.allowed_origins).toContain(`chrome-extension://${extra}/`);
    expect((await pedelec("install", "--user-data-dir", profile, "--extension-id", "not-an-id")).code).toBe(2);
    expect((await pedelec("install", "--browser", "firefox")).code).toBe(2);
  });

  it("removes the manifest on uninstall", async () => {
    await pedelec("install", "--user-data-dir", profile);
    const removed = await pedelec("uninstall", "--user-data-dir", profile);
    expect(removed.out).toContain("Removed");
    await expect(access(join(profile, "NativeMessagingHosts", `${NATIVE_HOST_NAME}.json`))).rejects.toThrow();
    expect((await pedelec("uninstall", "--user-data-dir", profile)).out).toContain("Nothing to remove");
  });
});

describe("pedelec status / stop / usage", () => {
  it("says Core is not running, with exit 1", async () => {
    const result = await pedelec("status");
    expect(result.code).toBe(1);
    expect(result.out).toContain("not running");
    expect((await pedelec("stop")).code).toBe(0);
  });

  it("rejects unknown commands and flags with exit 2, naming the flag and showing the command's usage", async () => {
    expect((await pedelec("fly")).code).toBe(2);
    for (const command of ["start", "stop", "status", "install", "uninstall", "doctor", "providers"]) {
      const refused = await pedelec(command, "--bogus");
      expect(refused.code, command).toBe(2);
      expect(refused.err, command).toContain("--bogus");
      expect(refused.err, command).toContain(`Usage: pedelec ${command === "uninstall" ? "install" : command}`);
    }
    const config = await pedelec("config", "get", "--bogus");
    expect(config.code).toBe(2);
    expect(config.err).toContain("--bogus");
  });

  it("answers --help and --version for pedelec and every command, without touching Core or the browsers", async () => {
    expect((await pedelec("--version")).out).toBe(`pedelec ${CORE_VERSION}`);
    const overall = await pedelec("--help");
    expect(overall.code).toBe(0);
    for (const command of ["start", "stop", "status", "install", "uninstall", "doctor", "providers", "config"]) {
      expect(overall.out).toContain(`  ${command}`);
      const help = await pedelec(command, "--help");
      expect(help.code, command).toBe(0);
      expect(help.out, command).toMatch(/^Usage: pedelec /);
      const version = await pedelec(command, "--version");
      expect(version.code, command).toBe(0);
      expect(version.out, command).toBe(`pedelec ${command} ${CORE_VERSION}`);
    }
    expect((await pedelec("help", "doctor")).out).toContain("Usage: pedelec doctor");
    // Nothing was installed or started for any of that.
    await expect(access(join(home, "bin"))).rejects.toThrow();
  });

  it("stops a detached Core and says so only once its process has exited", async () => {
    expect((await pedelec("start", "--detach")).code).toBe(0);
    const { pid } = JSON.parse((await pedelec("status", "--json")).out) as { pid: number };
    expect(isProcessRunning(pid)).toBe(true);
    const stopped = await pedelec("stop");
    expect(stopped).toMatchObject({ code: 0, out: "Pedelec Core stopped." });
    expect(isProcessRunning(pid)).toBe(false);
  });

  it("reports the Core that runs when several `start --detach` race, not each starter's own", async () => {
    const starts = await Promise.all([pedelec("start", "--detach"), pedelec("start", "--detach"), pedelec("start", "--detach")]);
    try {
      const { pid } = JSON.parse((await pedelec("status", "--json")).out) as { pid: number };
      for (const started of starts) {
        expect(started.code, started.err).toBe(0);
        expect(started.out).toMatch(new RegExp(`Pedelec Core (started in the background|is already running) \\(pid ${pid}[,)]`));
      }
      expect(starts.filter((started) => started.out.includes("started in the background")).length).toBeLessThanOrEqual(1);
    } finally {
      expect((await pedelec("stop")).code).toBe(0);
    }
  });

  it("reports status as JSON, running or not", async () => {
    const stopped = await pedelec("status", "--json");
    expect(stopped.code).toBe(1);
    expect(JSON.parse(stopped.out)).toEqual({
      running: false,
      pid: null,
      version: null,
      sessions: null,
      home,
      socket: join(home, "run", "core.sock"),
    });
    const core = await startCore({ ...process.env, PEDELEC_HOME: home });
    try {
      const running = await pedelec("status", "--json");
      expect(running.code).toBe(0);
      expect(JSON.parse(running.out)).toEqual({
        running: true,
        pid: process.pid,
        version: CORE_VERSION,
        sessions: 0,
        home,
        socket: join(home, "run", "core.sock"),
      });
    } finally {
      await core.stop();
    }
  });
});

describe("pedelec providers / config", () => {
  it("lists every provider with its availability, version and reason, as a table or JSON", async () => {
    const env = { PEDELEC_PROVIDER_PATH: standInDir, PATH: "/usr/bin:/bin" };
    const json = await pedelecWith(env, "providers", "--json");
    expect(json.code).toBe(0);
    const providers = JSON.parse(json.out) as { code: string; available: boolean; version: string | null; error: string | null }[];
    expect(providers.find((provider) => provider.code === "claude")).toEqual({
      code: "claude",
      name: "Claude Code",
      available: true,
      version: "2.1.332",
      error: null,
    });
    expect(providers.filter((provider) => !provider.available).every((provider) => (provider.error ?? "").length > 0)).toBe(true);
    const table = await pedelecWith(env, "providers");
    expect(table.out.split("\n")[0]).toMatch(/^code\s+name\s+available\s+version\s+error$/);
    expect(table.out).toMatch(/claude\s+Claude Code\s+yes\s+2\.1\.332/);
  });

  it("sets and reads settings, validated as Core validates them", async () => {
    expect((await pedelec("config", "set", "defaultProvider", "claude")).code).toBe(0);
    expect((await pedelec("config", "set", "defaultModels.claude", "opus")).code).toBe(0);
    expect((await pedelec("config", "set", "effortProfiles.claude.high", '["--effort","max"]')).code).toBe(0);
    expect((await pedelec("config", "get", "defaultProvider")).out).toBe("claude");
    expect(JSON.parse((await pedelec("config", "get", "effortProfiles.claude.high", "--json")).out)).toEqual(["--effort", "max"]);
    // A level nobody configured shows the provider's default profile.
    expect(JSON.parse((await pedelec("config", "get", "effortProfiles.claude.low", "--json")).out)).toEqual(["--effort", "low"]);
    const all = JSON.parse((await pedelec("config", "get", "--json")).out) as Record<string, unknown>;
    expect(all).toMatchObject({ defaultProvider: "claude", "defaultModels.claude": "opus", sessionRetentionDays: 7 });
    expect((await pedelec("config", "set", "sessionRetentionDays", "30")).code).toBe(0);
    expect((await pedelec("config", "get", "sessionRetentionDays")).out).toBe("30");
    expect((await pedelec("config", "set", "sessionRetentionDays", "0")).err).toContain("sessionRetentionDays must be");
    expect((await pedelec("config", "set", "sessionRetentionDays", "")).code).toBe(0);
    expect(all).toMatchObject({ modelResponseTimeoutSeconds: 120 });
    expect((await pedelec("config", "set", "modelResponseTimeoutSeconds", "45")).code).toBe(0);
    expect((await pedelec("config", "get", "modelResponseTimeoutSeconds")).out).toBe("45");
    expect((await pedelec("config", "set", "modelResponseTimeoutSeconds", "4")).err).toContain("modelResponseTimeoutSeconds must be");
    expect((await pedelec("config", "set", "modelResponseTimeoutSeconds", "7.5")).err).toContain("modelResponseTimeoutSeconds must be");
    expect((await pedelec("config", "set", "modelResponseTimeoutSeconds", "")).code).toBe(0);

    const refused = await pedelec("config", "set", "effortProfiles.claude.low", '["--dangerously-skip-permissions"]');
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("EFFORT_PROFILE_INVALID");
    expect((await pedelec("config", "set", "defaultEffortLevel", "extreme")).code).toBe(1);
    expect((await pedelec("config", "set", "favouriteColour", "blue")).err).toContain("unknown key");
    // Nothing refused reached the file.
    const settings = JSON.parse(await readFile(join(home, "settings.json"), "utf8")) as Record<string, unknown>;
    expect(settings).toEqual({
      version: 1,
      defaultProvider: "claude",
      defaultModels: { claude: "opus" },
      effortProfiles: { claude: { high: ["--effort", "max"] } },
    });
  });

  it("keeps the Ollama key secret: stored 0600, shown only as set, never printed", async () => {
    expect((await pedelec("config", "set", "ollama.apiKey", "sk-very-secret")).code).toBe(0);
    expect((await pedelec("config", "set", "ollama.baseUrl", "http://127.0.0.1:8080")).code).toBe(0);
    const all = await pedelec("config", "get", "--json");
    expect(all.out).not.toContain("sk-very-secret");
    expect(JSON.parse(all.out)).toMatchObject({ "ollama.apiKey": "(set)", "ollama.baseUrl": "http://127.0.0.1:8080" });
    expect((await pedelec("config", "get", "ollama.apiKey")).out).toBe("(set)");
    expect((await stat(join(home, "settings.json"))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(home, "settings.json"), "utf8"))).toMatchObject({ ollama: { apiKey: "sk-very-secret" } });

    const refused = await pedelec("config", "set", "ollama.baseUrl", "ftp://127.0.0.1/");
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("OLLAMA_BASE_URL_INVALID");
    // An address with credentials is refused without repeating them.
    const withCredentials = await pedelec("config", "set", "ollama.baseUrl", "http://user:pw-secret@127.0.0.1:11434");
    expect(withCredentials.err).toContain("OLLAMA_BASE_URL_INVALID");
    expect(withCredentials.err).not.toContain("pw-secret");
    // Empty values reset: the default address, no key.
    expect((await pedelec("config", "set", "ollama.baseUrl", "")).code).toBe(0);
    expect((await pedelec("config", "set", "ollama.apiKey", "")).code).toBe(0);
    expect(JSON.parse((await pedelec("config", "get", "--json")).out)).toMatchObject({
      "ollama.apiKey": null,
      "ollama.baseUrl": "http://127.0.0.1:11434",
    });
    const refusedProfile = await pedelec("config", "set", "effortProfiles.ollama.high", '["--base-url","http://evil.example"]');
    expect(refusedProfile.err).toContain("EFFORT_PROFILE_INVALID");
  });

  it("reads a value of - from stdin, so the key never goes on the command line", async () => {
    const key = "sk-from-stdin-0123456789";
    const argv = ["config", "set", "ollama.apiKey", "-"];
    const piped = await pedelecReading(Readable.from([Buffer.from(`${key}\n`)]), ...argv);
    expect(piped).toMatchObject({ code: 0, err: "" });
    expect(argv.join(" ")).not.toContain(key);
    expect(piped.out).not.toContain(key);
    const settingsFile = join(home, "settings.json");
    // The key itself, not "-", with the pipe's final line ending dropped.
    expect(JSON.parse(await readFile(settingsFile, "utf8")).ollama.apiKey).toBe(key);
    expect((await stat(settingsFile)).mode & 0o777).toBe(0o600);
    expect((await pedelec("config", "get", "ollama.apiKey")).out).toBe("(set)");
    // From a file without a final newline, and with Windows line endings.
    expect((await pedelecReading(Readable.from(["sk-two"]), ...argv)).code).toBe(0);
    expect(JSON.parse(await readFile(settingsFile, "utf8")).ollama.apiKey).toBe("sk-two");
    expect((await pedelecReading(Readable.from(["sk-three\r\n"]), ...argv)).code).toBe(0);
    expect(JSON.parse(await readFile(settingsFile, "utf8")).ollama.apiKey).toBe("sk-three");

    // Nothing on stdin, or two lines, change nothing (and an unknown key is refused before anything is read).
    const empty = await pedelecReading(Readable.from([]), ...argv);
    expect(empty.code).toBe(1);
    expect(empty.err).toContain("no value for ollama.apiKey on stdin");
    const twoLines = await pedelecReading(Readable.from(["sk-a\nsk-b\n"]), ...argv);
    expect(twoLines.err).toContain("ollama.apiKey must be one line");
    expect(twoLines.err).not.toContain("sk-a");
    const unknown = await pedelecReading(fakeTerminal("never read\r"), "config", "set", "ollama.apiKeys", "-");
    expect(unknown).toMatchObject({ code: 1, err: expect.stringContaining("unknown key") });
    expect(JSON.parse(await readFile(settingsFile, "utf8")).ollama.apiKey).toBe("sk-three");

    // Other keys take - the same way.
    expect((await pedelecReading(Readable.from(["claude\n"]), "config", "set", "defaultProvider", "-")).code).toBe(0);
    expect((await pedelec("config", "get", "defaultProvider")).out).toBe("claude");
  });

  it("prompts for a secret on a terminal without echoing it, and warns when one is given on the command line", async () => {
    const written: string[] = [];
    const originalWrite = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    const terminal = fakeTerminal("sk-typ\u007fped\r");
    let typed: Awaited<ReturnType<typeof pedelecReading>>;
    try {
      typed = await pedelecReading(terminal, "config", "set", "ollama.apiKey", "-");
    } finally {
      process.stderr.write = originalWrite;
    }
    expect(typed.code).toBe(0);
    expect(terminal.rawModes).toEqual([true, false]);
    expect(written.join("")).toContain("ollama.apiKey (not shown as you type): ");
    expect(written.join("")).not.toContain("sk-ty");
    expect(JSON.parse(await readFile(join(home, "settings.json"), "utf8")).ollama.apiKey).toBe("sk-typed");

    const onCommandLine = await pedelec("config", "set", "ollama.apiKey", "sk-visible");
    expect(onCommandLine.code).toBe(0);
    expect(onCommandLine.err).toContain("pedelec config set ollama.apiKey -");
    expect(onCommandLine.err).not.toContain("sk-visible");
  });
});
