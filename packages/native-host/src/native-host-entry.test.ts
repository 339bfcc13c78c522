import { spawn } from "node:child_process";
import { access, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CORE_OUTPUT_FILE } from "@pedelec/core-client/core-spawn";
import { CORE_VERSION } from "@pedelec/core-client/core-version";

// The entry as `tsc -b` builds it (the bundle Chrome starts is made from it).
const entry = fileURLToPath(new URL("../dist/native-host-entry.js", import.meta.url));

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-host-entry-"));
});
afterEach(async () => {
  // Started the way Chrome starts it, the host launched Core, which outlives it (as it should): stop that Core.
  await stopCoreOf(home);
  await rm(home, { recursive: true, force: true });
});

/** Stops the Core the host launched in `home`, if it launched one, and waits until it has exited. */
async function stopCoreOf(home: string): Promise<void> {
  // The host opens Core's output file before it starts Core; Core then takes its lock, which names it.
  if (
    !(await access(join(home, "logs", CORE_OUTPUT_FILE)).then(
      () => true,
      () => false,
    ))
  )
    return;
  const lockedBy = async (): Promise<number> => Number.parseInt(await readFile(join(home, "run", "core.lock"), "utf8").catch(() => ""), 10);
  const lockDeadline = performance.now() + 10_000;
  let pid = await lockedBy();
  while (!(pid > 0)) {
    if (performance.now() > lockDeadline) throw new Error("the Core the host launched never took its lock");
    await new Promise((resolve) => setTimeout(resolve, 10));
    pid = await lockedBy();
  }
  const running = (): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (running()) process.kill(pid, "SIGTERM");
  const deadline = performance.now() + 10_000;
  while (running()) {
    if (performance.now() > deadline) throw new Error(`Core ${pid} did not stop within 10 s of SIGTERM`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function runEntry(args: string[], stdin: "closed" | "open-then-closed"): Promise<{ code: number | null; stdout: Buffer }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], { env: { ...process.env, PEDELEC_HOME: home }, stdio: ["pipe", "pipe", "ignore"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    const deadline = setTimeout(() => {
      child.kill();
      reject(new Error("the entry did not exit within 10 s"));
    }, 10_000);
    child.on("close", (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout: Buffer.concat(chunks) });
    });
    if (stdin === "closed") child.stdin.end();
    else setTimeout(() => child.stdin.end(), 200);
  });
}

describe("pedelec-native-host entry", () => {
  it("answers --version and --help from a terminal and exits 0", async () => {
    const version = await runEntry(["--version"], "closed");
    expect(version.code).toBe(0);
    expect(version.stdout.toString("utf8")).toBe(`pedelec-native-host ${CORE_VERSION}\n`);
    const help = await runEntry(["--help"], "closed");
    expect(help.code).toBe(0);
    expect(help.stdout.toString("utf8")).toContain("pedelec doctor");
  });

  it("runs as a host when started the way Chrome starts it: only Native Messaging frames on stdout, exit when stdin closes", async () => {
    for (const args of [
      ["chrome-extension://jipdjobnmfeagcdooiopbbkmbpgbkdhe/"],
      ["chrome-extension://jipdjobnmfeagcdooiopbbkmbpgbkdhe/", "--parent-window=0"],
    ]) {
      const host = await runEntry(args, "open-then-closed");
      expect(host.code, args.join(" ")).toBe(0);
      // The first frame: a 4-byte little-endian length, then the host's status as JSON.
      const length = host.stdout.readUInt32LE(0);
      expect(JSON.parse(host.stdout.subarray(4, 4 + length).toString("utf8")), args.join(" ")).toMatchObject({
        kind: "host-status",
        version: CORE_VERSION,
      });
    }
  });
});
