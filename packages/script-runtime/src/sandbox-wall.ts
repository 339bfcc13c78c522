import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, open, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";

/** The OS-level wall around sandboxed runs, or why there is none. */
export type SandboxWall = { kind: "bubblewrap"; executable: string } | { kind: "none"; reason: string };

const INSTALL_HINT =
  "install bubblewrap: `sudo apt install bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap` (Fedora) or " +
  "`sudo pacman -S bubblewrap` (Arch)";
const SMOKE_TIMEOUT_MS = 10_000;

const detected = new Map<string, Promise<SandboxWall>>();

/**
 * Detects the OS wall once per PATH: on Linux, `bwrap` found on PATH or at /usr/bin/bwrap AND a smoke run with the
 * namespaces the runner uses succeeds; otherwise `{ kind: "none", reason }` saying how to install it.
 */
export function detectSandboxWall(env: NodeJS.ProcessEnv = process.env): Promise<SandboxWall> {
  const key = `${process.platform}\0${env.PATH ?? ""}`;
  let wall = detected.get(key);
  if (wall === undefined) {
    wall = probeSandboxWall(env, process.platform);
    detected.set(key, wall);
  }
  return wall;
}

/** The detection itself, without the memo (tests give it other PATHs and platforms). */
export async function probeSandboxWall(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): Promise<SandboxWall> {
  if (platform !== "linux") {
    return { kind: "none", reason: "sandboxed scripts need bubblewrap on Linux; this platform is not supported yet" };
  }
  const executable = await findBubblewrap(env.PATH);
  if (executable === undefined) {
    return { kind: "none", reason: `bubblewrap (bwrap) was not found on PATH or at /usr/bin/bwrap; ${INSTALL_HINT}` };
  }
  const failure = await smokeRun(executable);
  if (failure !== undefined) {
    return {
      kind: "none",
      reason:
        `bubblewrap at ${executable} could not create the sandbox (${failure}); unprivileged user namespaces may be ` +
        `disabled (on Ubuntu 23.10+ the AppArmor profile shipped with the bubblewrap package allows them), or ${INSTALL_HINT}`,
    };
  }
  return { kind: "bubblewrap", executable };
}

async function findBubblewrap(pathVariable: string | undefined): Promise<string | undefined> {
  const folders = (pathVariable ?? "").split(delimiter).filter((folder) => folder !== "" && isAbsolute(folder));
  for (const candidate of [...folders.map((folder) => join(folder, "bwrap")), "/usr/bin/bwrap"]) {
    try {
      if (!(await stat(candidate)).isFile()) continue;
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; try the next folder.
    }
  }
  return undefined;
}

/**
 * Runs bwrap itself inside the same namespaces the runner asks for, mounting a folder from a descriptor as the runner
 * mounts `.pedelec-runtime` (`--ro-bind-fd`, which old bubblewrap lacks); undefined when it worked.
 */
async function smokeRun(executable: string): Promise<string | undefined> {
  const args = [
    "--unshare-all",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
    "--ro-bind-fd",
    "3",
    "/tmp/descriptor-mount",
    "--clearenv",
    "--",
    executable,
    "--version",
  ];
  const folder = await open("/", constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    return await new Promise((resolve) => {
      const child = spawn(executable, args, { env: {}, stdio: ["ignore", "ignore", "pipe", folder.fd], timeout: SMOKE_TIMEOUT_MS });
      let stderr = "";
      child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      child.once("error", (error) => resolve(error.message));
      child.once("close", (code, signal) => {
        if (code === 0) resolve(undefined);
        else resolve((stderr.trim() || `exit ${code ?? signal}`).split("\n")[0]);
      });
    });
  } finally {
    await folder.close();
  }
}
