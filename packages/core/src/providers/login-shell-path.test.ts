import { access, chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isProcessRunning } from "../process-stat.js";
import { LoginShellPath } from "./login-shell-path.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "pedelec-login-shell-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A stand-in login shell: prints what a chatty profile might, then runs the command with the PATH it "set up". */
async function shell(body: string): Promise<string> {
  const file = path.join(root, "fake-shell");
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

describe("LoginShellPath", () => {
  it("reads the PATH the login shell sets up, between its markers, whatever the profile prints", async () => {
    const fake = await shell(`echo "Welcome back"; PATH="/opt/tools/bin:relative/bin:$PATH"; shift 3; eval "$1"; echo "bye"`);
    const directories = await new LoginShellPath({ SHELL: fake, PATH: "/usr/bin:/bin" }).directories();
    expect(directories).toEqual(["/opt/tools/bin", "/usr/bin", "/bin"]);
  });

  it("adds nothing when there is no shell, or it hangs past the limit", async () => {
    expect(await new LoginShellPath({ PATH: "/usr/bin" }).directories()).toEqual([]);
    const hanging = await shell("sleep 30");
    const started = Date.now();
    expect(await new LoginShellPath({ SHELL: hanging }, 300).directories()).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("stops a shell that takes too long with what its profile started, letting the profile's exit traps run", async () => {
    const lock = path.join(root, "rehash.lock");
    const background = path.join(root, "background.pid");
    // A profile that holds a lock it releases in a trap (as pyenv's rehash does) and leaves a process in the background.
    const slow = await shell(`sleep 30 & echo $! > "${background}"; trap 'rm -f "${lock}"; exit 143' TERM; : > "${lock}"; sleep 30`);
    expect(await new LoginShellPath({ SHELL: slow }, 300).directories()).toEqual([]);
    const backgroundPid = Number(await readFile(background, "utf8"));
    await expect
      .poll(
        () =>
          access(lock).then(
            () => "held",
            () => "released",
          ),
        { timeout: 5_000, interval: 20 },
      )
      .toBe("released");
    await expect.poll(() => isProcessRunning(backgroundPid), { timeout: 5_000, interval: 20 }).toBe(false);
  });

  it("stops a shell still reading when Core stops, answers its wait with nothing, and starts no other", async () => {
    const background = path.join(root, "background.pid");
    const slow = await shell(`sleep 30 & echo $! > "${background}"; sleep 30`);
    const shellPath = new LoginShellPath({ SHELL: slow }, 20_000);
    const reading = shellPath.directories();
    await expect
      .poll(
        () =>
          readFile(background, "utf8").then(
            (text) => /^\d+\n$/.test(text),
            () => false,
          ),
        { timeout: 5_000, interval: 20 },
      )
      .toBe(true);
    const started = Date.now();
    shellPath.stop();
    expect(await reading).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1_000);
    const backgroundPid = Number(await readFile(background, "utf8"));
    await expect.poll(() => isProcessRunning(backgroundPid), { timeout: 5_000, interval: 20 }).toBe(false);
    expect(await shellPath.directories()).toEqual([]);
  });
});
