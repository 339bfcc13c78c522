import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProviderAdapter } from "./provider-adapter.js";
import { discoverProvider, findExecutable, notInstalledDiscovery, probeVersion, providerSearchPath } from "./provider-discovery.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "pedelec-discovery-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function script(directory: string, name: string, body: string, mode = 0o755): Promise<string> {
  await mkdir(directory, { recursive: true });
  const file = path.join(directory, name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, mode);
  return file;
}

const never = new AbortController().signal;

describe("providerSearchPath", () => {
  it("puts PEDELEC_PROVIDER_PATH first, then PATH, then the fallbacks, without duplicates or relative entries", () => {
    const directories = providerSearchPath({
      PEDELEC_PROVIDER_PATH: `/opt/stand-ins${path.delimiter}${path.delimiter}/usr/local/bin`,
      PATH: `/usr/bin${path.delimiter}relative/bin${path.delimiter}/usr/bin/${path.delimiter}/bin`,
      HOME: "/home/ada",
    });
    expect(directories).toEqual(["/opt/stand-ins", "/usr/local/bin", "/usr/bin", "/bin", "/home/ada/.local/bin", "/opt/homebrew/bin"]);
  });

  it("works with no PATH at all", () => {
    expect(providerSearchPath({ HOME: "/home/ada" })).toEqual(["/home/ada/.local/bin", "/usr/local/bin", "/opt/homebrew/bin"]);
  });
});

describe("findExecutable", () => {
  it("lets PEDELEC_PROVIDER_PATH win over PATH", async () => {
    const preferred = await script(path.join(root, "preferred"), "claude", "echo 1.0.0");
    await script(path.join(root, "on-path"), "claude", "echo 2.0.0");
    const directories = providerSearchPath({ PEDELEC_PROVIDER_PATH: path.join(root, "preferred"), PATH: path.join(root, "on-path") });
    expect(await findExecutable("claude", directories)).toBe(preferred);
  });

  it("skips non-executable files and directories, and follows symlinks", async () => {
    await script(path.join(root, "a"), "claude", "echo 1.0.0", 0o644);
    await mkdir(path.join(root, "b", "claude"), { recursive: true });
    const target = await script(path.join(root, "real"), "claude-2.1", "echo 2.1.0");
    await mkdir(path.join(root, "c"));
    const link = path.join(root, "c", "claude");
    await symlink(target, link);
    const found = await findExecutable("claude", [path.join(root, "a"), path.join(root, "b"), path.join(root, "c")]);
    expect(found).toBe(link);
  });

  it("skips a dangling symlink and returns null when nothing fits", async () => {
    await mkdir(path.join(root, "d"));
    await symlink(path.join(root, "missing"), path.join(root, "d", "claude"));
    expect(await findExecutable("claude", [path.join(root, "d"), path.join(root, "nowhere")])).toBeNull();
  });

  it("refuses program names with a path separator", async () => {
    await script(path.join(root, "x"), "claude", "echo 1.0.0");
    expect(await findExecutable("../x/claude", [path.join(root, "y")])).toBeNull();
  });
});

describe("probeVersion", () => {
  it("is available when --version exits 0 with a dotted version", async () => {
    const bin = await script(root, "claude", `[ "$1" = "--version" ] && echo "2.1.332 (Claude Code)"`);
    expect(await probeVersion(bin, never)).toEqual({ available: true, executablePath: bin, version: "2.1.332", error: null });
  });

  it("is unavailable when --version fails, with the reason", async () => {
    const bin = await script(root, "claude", `echo "boom: missing runtime" >&2; exit 2`);
    expect(await probeVersion(bin, never)).toEqual({
      available: false,
      executablePath: bin,
      version: null,
      error: "claude --version failed: exit code 2: boom: missing runtime",
    });
  });

  it("is unavailable when the output has no version number", async () => {
    const bin = await script(root, "claude", `echo "Claude Code"`);
    const discovery = await probeVersion(bin, never);
    expect(discovery.available).toBe(false);
    expect(discovery.error).toBe("claude --version failed: no version number in its output");
  });

  it("is unavailable when the file cannot be run", async () => {
    const discovery = await probeVersion(path.join(root, "claude"), never);
    expect(discovery.available).toBe(false);
    expect(discovery.error).toMatch(/^claude --version failed: .*ENOENT/);
  });

  it("stops waiting when cancelled, and marks the answer transient", async () => {
    const bin = await script(root, "claude", "exec sleep 30");
    const controller = new AbortController();
    const probing = probeVersion(bin, controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect(await probing).toMatchObject({ available: false, error: "claude --version was cancelled", transient: true });
  });

  it("marks a probe that timed out as transient: it says nothing about the provider", async () => {
    const bin = await script(root, "claude", "exec sleep 30");
    expect(await probeVersion(bin, never, undefined, 100)).toMatchObject({
      available: false,
      error: "claude --version failed: no answer within 0.1 s",
      transient: true,
    });
  });

  it("does not mark a conclusive failure as transient", async () => {
    const failing = await script(root, "claude", "exit 2");
    expect((await probeVersion(failing, never)).transient).toBeUndefined();
    expect((await probeVersion(path.join(root, "missing"), never)).transient).toBeUndefined();
  });
});

describe("discoverProvider", () => {
  const adapter = {
    code: "claude",
    programName: "claude",
    discover: (executablePath: string, signal: AbortSignal) => probeVersion(executablePath, signal),
  } as unknown as ProviderAdapter;

  it("says the CLI is not installed when it is on no search directory", async () => {
    const discovery = await discoverProvider(adapter, { PATH: path.join(root, "empty"), HOME: root }, never);
    expect(discovery).toEqual(notInstalledDiscovery("claude"));
    expect(discovery.error).toBe("claude is not installed or not on PATH");
  });

  it("probes the executable it found", async () => {
    const bin = await script(path.join(root, "bin"), "claude", "echo 3.4.5");
    const discovery = await discoverProvider(adapter, { PEDELEC_PROVIDER_PATH: path.join(root, "bin"), HOME: root }, never);
    expect(discovery).toEqual({ available: true, executablePath: bin, version: "3.4.5", error: null });
  });

  it("uses the configured path when the CLI is on no search directory (a Core the browser started)", async () => {
    const configured = await script(path.join(root, "installed"), "claude", "echo 3.4.5");
    const discovery = await discoverProvider(adapter, { PATH: path.join(root, "empty"), HOME: root }, never, configured);
    expect(discovery).toMatchObject({ available: true, executablePath: configured });
  });

  it("lets PEDELEC_PROVIDER_PATH override the configured path, and the configured path win over PATH", async () => {
    const override = await script(path.join(root, "override"), "claude", "echo 1.0.0");
    const configured = await script(path.join(root, "installed"), "claude", "echo 2.0.0");
    await script(path.join(root, "on-path"), "claude", "echo 3.0.0");
    const env = { PATH: path.join(root, "on-path"), HOME: root };
    expect(await discoverProvider(adapter, { ...env, PEDELEC_PROVIDER_PATH: path.join(root, "override") }, never, configured)).toMatchObject({
      executablePath: override,
    });
    expect(await discoverProvider(adapter, env, never, configured)).toMatchObject({ executablePath: configured, version: "2.0.0" });
  });

  it("says which setting to fix when the configured path is not an executable file", async () => {
    const discovery = await discoverProvider(adapter, { PATH: path.join(root, "empty"), HOME: root }, never, path.join(root, "gone", "claude"));
    expect(discovery).toMatchObject({ available: false, executablePath: null });
    expect(discovery.error).toContain("settings providers.claude.path");
  });
});
