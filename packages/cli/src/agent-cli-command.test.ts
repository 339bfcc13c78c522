import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCore, type RunningCore } from "@pedelec/core/core-daemon";
import { runAgentCli } from "./agent-cli-command.js";

let home: string;
let core: RunningCore | undefined;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-agent-cli-"));
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

const THREAD = "8d0c1d56-1b4f-4a53-9d56-2ac8c3b4f0aa";
const CAPABILITY = "c".repeat(43);

async function agentCli(argv: string[], env: NodeJS.ProcessEnv = { PEDELEC_THREAD_CAPABILITY: CAPABILITY }, stdin: string | Error = "") {
  let out = "";
  const code = await runAgentCli(argv, {
    out: (text) => (out += text),
    err: () => undefined,
    env: { PEDELEC_HOME: home, ...env },
    readStdin: async () => {
      if (stdin instanceof Error) throw stdin;
      return stdin;
    },
  });
  return { code, out, json: JSON.parse(out) as { error?: { code: string; message: string } } };
}

describe("pedelec-cli", () => {
  it.each([
    [["tool-call", "x", "{}"]],
    [["--thread-id", THREAD, "tool-dance", "x"]],
    [["--thread-id", THREAD, "tool-call"]],
    [["--thread-id", THREAD, "tool-spec", "x", "extra"]],
    [["--thread-id", "../../etc", "tool-spec", "x"]],
    [["--unknown", "tool-spec", "x"]],
  ])("answers bad usage %j with INVALID_INPUT as JSON and exit 2", async (argv) => {
    const result = await agentCli(argv);
    expect(result.code).toBe(2);
    expect(result.json.error?.code).toBe("INVALID_INPUT");
  });

  it("says IPC_UNAVAILABLE as JSON when Core is not running", async () => {
    const result = await agentCli(["--thread-id", THREAD, "tool-spec", "add_todo"]);
    expect(result.code).toBe(1);
    expect(result.json.error?.code).toBe("IPC_UNAVAILABLE");
  });

  it("takes the thread id from PEDELEC_THREAD_ID; an unknown thread is refused like a wrong capability", async () => {
    core = await startCore({ ...process.env, PEDELEC_HOME: home });
    const result = await agentCli(["tool-call", "add_todo", '{"title":"x"}'], { PEDELEC_THREAD_ID: THREAD, PEDELEC_THREAD_CAPABILITY: CAPABILITY });
    expect(result.code).toBe(1);
    expect(result.json.error).toMatchObject({ code: "THREAD_ACCESS_DENIED" });
  });

  it("refuses to run outside an agent turn, where no thread capability is in the environment", async () => {
    const result = await agentCli(["--thread-id", THREAD, "tool-spec", "add_todo"], {});
    expect(result.code).toBe(1);
    expect(result.json.error).toMatchObject({ code: "THREAD_ACCESS_DENIED", message: expect.stringContaining("PEDELEC_THREAD_CAPABILITY") });
  });

  it("answers arguments on stdin that cannot be read (invalid UTF-8, too large) with INVALID_INPUT, before reaching Core", async () => {
    const result = await agentCli(["--thread-id", THREAD, "tool-call", "add_todo", "-"], undefined, new TypeError("The encoded data was not valid for encoding utf-8"));
    expect(result.code).toBe(1);
    expect(result.json.error).toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("not valid for encoding utf-8") });
  });
});
