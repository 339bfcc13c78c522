import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { hostToExtensionMessageSchema, type HostToExtensionMessage } from "@pedelec/protocol/native-wire";
import { repoRoot } from "./harness.js";

const hostBin = join(repoRoot, "packages/native-host/bin/pedelec-native-host.js");
const pedelecBin = join(repoRoot, "packages/cli/bin/pedelec.js");

let home: string | undefined;
afterEach(async () => {
  if (!home) return;
  await new Promise<void>((resolve) => {
    spawn(process.execPath, [pedelecBin, "stop"], { env: { ...process.env, PEDELEC_HOME: home } }).on("close", () => resolve());
  });
  await rm(home, { recursive: true, force: true });
  home = undefined;
});

describe("the native host process", () => {
  it("speaks Chrome's framing on stdio, starts Core, and exits on stdin EOF", async () => {
    home = await mkdtemp(join(tmpdir(), "pedelec-host-process-"));
    const host = spawn(process.execPath, [hostBin, "chrome-extension://jipdjobnmfeagcdooiopbbkmbpgbkdhe/"], {
      env: { ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: join(repoRoot, "test/stand-ins/claude") },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const decoder = new FrameDecoder(1024 * 1024);
    const messages: HostToExtensionMessage[] = [];
    let strayBytes = false;
    host.stdout.on("data", (chunk: Buffer) => {
      for (const decoded of decoder.push(chunk)) {
        if (!decoded.ok) strayBytes = true;
        else messages.push(hostToExtensionMessageSchema.parse(decoded.message));
      }
    });
    const waitFor = async (match: (message: HostToExtensionMessage) => boolean) => {
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline) {
        const found = messages.find(match);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no matching message; got ${JSON.stringify(messages)}`);
    };

    expect(await waitFor((message) => message.kind === "host-status" && message.core === "connected")).toMatchObject({ coreLaunched: true });
    const origin = "http://127.0.0.1:9";
    host.stdin.write(encodeFrame({ kind: "request", id: "p1", type: "createSession", origin, payload: { provider: "claude" } }, 1024));
    expect(await waitFor((message) => message.kind === "response" && message.id === "p1")).toMatchObject({
      ok: true,
      result: { provider: "claude", status: "idle" },
    });
    // Requests meant for local programs are refused by the host itself, whether or not they carry an origin.
    host.stdin.write(encodeFrame({ kind: "request", id: "p2", type: "shutdown", payload: {} }, 1024));
    host.stdin.write(encodeFrame({ kind: "request", id: "p3", type: "ping", origin, payload: {} }, 1024));
    for (const id of ["p2", "p3"]) {
      expect(await waitFor((message) => message.kind === "response" && message.id === id)).toMatchObject({
        ok: false,
        error: { code: "INVALID_INPUT" },
      });
    }
    expect(messages.some((message) => message.kind === "host-status" && message.core === "unavailable")).toBe(false);

    const exited = new Promise<number | null>((resolve) => host.on("close", (code) => resolve(code)));
    // Chrome kills a host that ignores EOF; ours must leave on its own (a hang fails the test at its deadline).
    host.stdin.end();
    expect(await exited).toBe(0);
    expect(strayBytes).toBe(false);
    expect(decoder.pendingBytes).toBe(0);
    const log = await readFile(join(home, "logs", "native-host.log"), "utf8");
    // Core was started by the host's entry, before the rest of the host loaded, and by nothing else: one Core, which no
    // second start found already running.
    const launches = log.split("\n").filter((line) => line.includes('"launched Core"'));
    expect(launches).toHaveLength(1);
    expect(JSON.parse(launches[0]!)).toMatchObject({ asTheHostStarted: true, launchedAt: expect.any(String) });
    expect(log).not.toContain("Core is not running; starting it");
    expect(await readFile(join(home, "logs", "core-output.log"), "utf8")).not.toContain("already running");
    expect(log).toContain("stdin closed; exiting");
  });
});
