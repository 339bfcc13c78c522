import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "./core-daemon.js";
import { capabilityOfHangingAgent } from "./testing/agent-capability.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";

let home: string;
let core: RunningCore | undefined;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-core-patterns-"));
  env = { ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: standInDir, CLAUDE_CONFIG_DIR: join(home, "claude-state") };
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

async function pingLatency(connection: CoreConnection): Promise<number> {
  const started = performance.now();
  await connection.request("ping", {});
  return performance.now() - started;
}

function toolWithPattern(name: string, pattern: string) {
  return {
    name,
    description: "A tool whose schema came from a page",
    argsSchema: { type: "object" as const, properties: { s: { type: "string" as const, pattern } } },
  };
}

describe("Core and page patterns", () => {
  it("keeps answering other clients while it checks an agent's arguments against a catastrophic-backtracking pattern", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const skills = { guidance: "", tools: [toolWithPattern("check", "^(a+)+$")] };
    const { sessionId, workspace } = await page.request("createSession", { provider: "claude", skills }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
    const capability = await capabilityOfHangingAgent(workspace.path);
    const agent = await CoreConnection.open(core.paths.socketPath);
    const watcher = await CoreConnection.open(core.paths.socketPath);
    const baseline = await pingLatency(watcher);

    // With a backtracking engine this check takes about 2^32 steps (minutes), and Core has one thread.
    const argsJson = JSON.stringify({ s: `${"a".repeat(32)}!` });
    const call = agent.request("toolCall", { threadId: sessionId, capability, toolName: "check", argsJson }).then(
      () => null,
      (error: unknown) => error,
    );
    // A ping behind the call on the same connection, and one from another client, both while the call is checked.
    const [behindCall, otherClient] = await Promise.all([pingLatency(agent), pingLatency(watcher)]);
    expect(await call).toMatchObject({ code: "TOOL_ARGS_INVALID", message: expect.stringContaining('/s must match pattern "^(a+)+$"') as string });

    expect(Math.max(behindCall, otherClient)).toBeLessThan(Math.max(1_000, baseline * 20));
    agent.close();
    watcher.close();
    page.close();
  });

  it("refuses at createSession a pattern that needs backtracking, naming the tool and the field", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const skills = { guidance: "", tools: [toolWithPattern("list_todos", "^[a-z]*$"), toolWithPattern("add_todo", "(a)\\1")] };
    await expect(page.request("createSession", { provider: "claude", skills }, ORIGIN)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining('tool add_todo: argsSchema.properties.s.pattern "(a)\\\\1" is not supported: back-references') as string,
    });
    // Nothing was created, and Core goes on serving.
    await expect(page.request("ping", {})).resolves.toMatchObject({ sessions: 0 });
    page.close();
  });
});
