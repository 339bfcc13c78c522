import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { capabilityOfHangingAgent } from "@pedelec/core/testing/agent-capability";
import { useCoreUnderTest } from "@pedelec/core/testing/core-home";
import { CORE_VERSION } from "@pedelec/core-client/core-version";
import { runTsRuntime } from "./ts-runtime-command.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const core = useCoreUnderTest({ prefix: "pedelec-ts-runtime-", providerPath: standInDir, stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" } });
const THREAD = "8d0c1d56-1b4f-4a53-9d56-2ac8c3b4f0aa";
const ORIGIN = "http://127.0.0.1:4000";

async function tsRuntime(argv: string[], env: NodeJS.ProcessEnv, stdin = "") {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const code = await runTsRuntime(argv, {
    stdout: (chunk) => stdout.push(Buffer.from(chunk)),
    stderr: (chunk) => stderr.push(Buffer.from(chunk)),
    env: { PEDELEC_HOME: core.home, ...env },
    readStdin: async () => stdin,
  });
  const err = Buffer.concat(stderr).toString("utf8");
  const lastLine = err.trimEnd().split("\n").at(-1) ?? "";
  return { code, out: Buffer.concat(stdout), err, lastLine };
}

const lastError = (line: string) => (JSON.parse(line) as { error: { code: string; message: string } }).error;

/** A session whose agent is inside a turn, and the capability its processes inherit. */
async function agentInTurn() {
  const running = await core.start();
  const page = await CoreConnection.open(running.paths.socketPath);
  const { sessionId, workspace } = await page.request("createSession", { provider: "claude" }, ORIGIN);
  await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
  const capability = await capabilityOfHangingAgent(workspace.path);
  return { page, sessionId, workspace: workspace.path, env: { PEDELEC_THREAD_CAPABILITY: capability } };
}

describe("pedelec-ts-runtime", () => {
  it.each([
    [["run", "x.ts"]],
    [["--thread-id", THREAD, "exec", "x.ts"]],
    [["--thread-id", THREAD, "run"]],
    [["--thread-id", THREAD, "run", "x.ts", "extra"]],
    [["--thread-id", THREAD, "--allow-net", "run", "x.ts"]],
    [["--thread-id", THREAD, "run", "--timeout-ms", "soon", "x.ts"]],
    [["--thread-id", "../../etc", "run", "x.ts"]],
  ])("refuses bad usage %j with exit 125 and a JSON error as the last stderr line", async (argv) => {
    const result = await tsRuntime(argv, { PEDELEC_THREAD_CAPABILITY: "c".repeat(43) });
    expect(result.code).toBe(125);
    expect(lastError(result.lastLine).code).toBe("INVALID_INPUT");
    expect(result.out.length).toBe(0);
  });

  it("answers --help and --version outside a turn, but passes them to the script after --", async () => {
    const help = await tsRuntime(["--help"], {});
    expect(help.code).toBe(0);
    expect(help.out.toString("utf8")).toContain("pedelec-ts-runtime --thread-id <id> run");
    const version = await tsRuntime(["--version"], {});
    expect(version.code).toBe(0);
    expect(version.out.toString("utf8")).toBe(`pedelec-ts-runtime ${CORE_VERSION}\n`);
    // After --, --help is the script's argument: the run is attempted (and refused here: no capability).
    const passed = await tsRuntime(["--thread-id", THREAD, "run", "x.ts", "--", "--help"], {});
    expect(passed.code).toBe(125);
    expect(lastError(passed.lastLine).code).toBe("THREAD_ACCESS_DENIED");
  });

  it("refuses outside an agent turn, and when Core is not running", async () => {
    expect(lastError((await tsRuntime(["--thread-id", THREAD, "run", "x.ts"], {})).lastLine).code).toBe("THREAD_ACCESS_DENIED");
    const noCore = await tsRuntime(["--thread-id", THREAD, "run", "x.ts"], { PEDELEC_THREAD_CAPABILITY: "c".repeat(43) });
    expect(noCore.code).toBe(125);
    expect(lastError(noCore.lastLine).code).toBe("IPC_UNAVAILABLE");
  });

  it("passes the script's bytes, stderr and exit code through; arguments after -- are only Deno.args", async () => {
    const { page, sessionId, workspace, env } = await agentInTurn();
    await writeFile(
      join(workspace, "echo.ts"),
      [
        "await Deno.stdout.write(new Uint8Array([0xff, 0x00, 0x41]));",
        'console.error("to stderr");',
        "console.log(JSON.stringify(Deno.args));",
        'const denied = await Deno.permissions.query({ name: "net" });',
        "console.log(denied.state);",
        "Deno.exit(7);",
      ].join("\n"),
    );
    const result = await tsRuntime(["--thread-id", sessionId, "run", "echo.ts", "--", "--allow-net", "-A", "x"], env);
    expect(result.code).toBe(7);
    expect([...result.out.subarray(0, 3)]).toEqual([0xff, 0x00, 0x41]);
    expect(result.out.subarray(3).toString("utf8")).toBe('["--allow-net","-A","x"]\ndenied\n');
    expect(result.err).toBe("to stderr\n");
    page.close();
  });

  it("runs a script from stdin with relative imports from the workspace root", async () => {
    const { page, sessionId, workspace, env } = await agentInTurn();
    await writeFile(join(workspace, "lib.ts"), "export const answer = 42;\n");
    const result = await tsRuntime(["--thread-id", sessionId, "run", "-"], env, 'import { answer } from "./lib.ts";\nconsole.log(answer);\n');
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(result.out.toString("utf8")).toBe("42\n");
    page.close();
  });

  it("exits 124 with DENO_TIMEOUT on timeout and 125 with the refusal's code for an entry outside the workspace", async () => {
    const { page, sessionId, workspace, env } = await agentInTurn();
    await writeFile(join(workspace, "spin.ts"), "for (;;) {}\n");
    const timedOut = await tsRuntime(["--thread-id", sessionId, "run", "--timeout-ms", "500", "spin.ts"], env);
    expect(timedOut.code).toBe(124);
    expect(lastError(timedOut.lastLine).code).toBe("DENO_TIMEOUT");
    const outside = await tsRuntime(["--thread-id", sessionId, "run", "../../etc/passwd"], env);
    expect(outside.code).toBe(125);
    expect(lastError(outside.lastLine).code).toBe("DENO_ENTRY_INVALID");
    page.close();
  });
});
