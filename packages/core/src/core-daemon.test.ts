import { readFile, rm, stat, writeFile, mkdir, readdir } from "node:fs/promises";
import { connect } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "./core-daemon.js";
import { addTodoTool } from "./testing/add-todo-tool.js";
import { capabilityOfHangingAgent } from "./testing/agent-capability.js";
import { createCoreHome } from "./testing/core-home.js";
import { collectSessionEvents } from "./testing/session-events.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const tools = [addTodoTool(2_000)];

let home: string;
let core: RunningCore | undefined;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  ({ home, env } = await createCoreHome({ prefix: "pedelec-core-", providerPath: standInDir, stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" } }));
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

describe("Core daemon", () => {
  it("listens on a 0600 socket inside a 0700 run folder", async () => {
    core = await startCore(env);
    expect((await stat(core.paths.runDir)).mode & 0o777).toBe(0o700);
    expect((await stat(core.paths.socketPath)).mode & 0o777).toBe(0o600);
    const connection = await CoreConnection.open(core.paths.socketPath);
    const status = await connection.request("ping", {});
    expect(status).toMatchObject({ pid: process.pid, home, sessions: 0 });
    connection.close();
  });

  it("refuses a second Core for the same home", async () => {
    core = await startCore(env);
    await expect(startCore(env)).rejects.toMatchObject({ code: "IPC_UNAVAILABLE", details: { alreadyRunning: true } });
  });

  it("replaces a stale socket and lock left by a Core that died", async () => {
    await mkdir(join(home, "run"), { recursive: true });
    await writeFile(join(home, "run", "core.lock"), "999999999");
    await writeFile(join(home, "run", "core.sock"), "");
    core = await startCore(env);
    const connection = await CoreConnection.open(core.paths.socketPath);
    await expect(connection.request("ping", {})).resolves.toMatchObject({ pid: process.pid });
    connection.close();
  });

  it("sweeps managed workspaces a crashed Core left behind", async () => {
    await mkdir(join(home, "workspaces", "old-thread-1"), { recursive: true });
    core = await startCore(env);
    // The sweep is part of what starts once Core listens.
    await core.whenReady();
    expect(await readdir(join(home, "workspaces"))).toEqual([]);
  });

  it("answers a malformed frame by closing that connection only", async () => {
    core = await startCore(env);
    const healthy = await CoreConnection.open(core.paths.socketPath);
    const raw = connect(core.paths.socketPath);
    const closed = new Promise<string>((resolvePromise) => {
      let received = "";
      raw.on("data", (chunk) => (received += chunk.subarray(4).toString()));
      raw.on("close", () => resolvePromise(received));
    });
    const body = Buffer.from("this is not json");
    const header = Buffer.alloc(4);
    header.writeUInt32LE(body.length, 0);
    raw.write(Buffer.concat([header, body]));
    expect(JSON.parse(await closed)).toMatchObject({ kind: "fatal", error: { code: "INVALID_INPUT" } });
    await expect(healthy.request("ping", {})).resolves.toMatchObject({ pid: process.pid });
    healthy.close();
  });

  it("answers an oversized frame with MESSAGE_TOO_LARGE before reading it", async () => {
    core = await startCore(env);
    const raw = connect(core.paths.socketPath);
    const closed = new Promise<string>((resolvePromise) => {
      let received = "";
      raw.on("data", (chunk) => (received += chunk.subarray(4).toString()));
      raw.on("close", () => resolvePromise(received));
    });
    const header = Buffer.alloc(4);
    header.writeUInt32LE(17 * 1024 * 1024, 0);
    raw.write(header);
    expect(JSON.parse(await closed)).toMatchObject({ kind: "fatal", error: { code: "MESSAGE_TOO_LARGE" } });
  });

  it("answers a well-formed but invalid request with INVALID_INPUT and keeps the connection", async () => {
    core = await startCore(env);
    const connection = await CoreConnection.open(core.paths.socketPath);
    await expect(connection.request("createSession", { provider: "nope" } as never, ORIGIN)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    // Agent-only requests are refused when they claim to come from a page.
    await expect(connection.request("ping", {}, ORIGIN)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(connection.request("ping", {})).resolves.toBeDefined();
    connection.close();
  });

  it("answers ping at once while what sessions need still loads, then the requests that waited for it in their order", async () => {
    core = await startCore(env);
    const connection = await CoreConnection.open(core.paths.socketPath);
    const answered: string[] = [];
    const noted = <T>(name: string, request: Promise<T>): Promise<T> => request.finally(() => answered.push(name));
    // The first requests of a fresh Core: the settings and providers wait for its background start, the ping does not.
    const settings = noted("getSettings", connection.request("getSettings", {}, ORIGIN));
    const providers = noted("listProviders", connection.request("listProviders", {}, ORIGIN));
    const unknown = noted("unknown", connection.request("noSuchRequest" as never, {} as never));
    const ping = await noted("ping", connection.request("ping", {}));
    expect(ping.sessions).toBe(0);
    await expect(unknown).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await settings;
    await providers;
    // A request no schema admits needs nothing loaded but the schemas: it is refused before the background start ends.
    expect(answered).toEqual(["ping", "unknown", "getSettings", "listProviders"]);
    expect((await connection.request("ping", {})).assetPort).toEqual(expect.any(Number));
    connection.close();
  });
});

describe("Core sessions", () => {
  it("creates a session with a managed workspace and the effort profile snapshot", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const info = await page.request("createSession", { provider: "claude", effortLevel: "high", skills: { guidance: "g", tools } }, ORIGIN);
    expect(info).toMatchObject({ provider: "claude", effortLevel: "high", status: "idle", toolNames: ["add_todo"], autoEndOnDisconnect: true });
    expect(info.workspace.path).toBe(join(home, "workspaces", info.sessionId));
    expect((await readdir(join(info.workspace.path, ".pedelec-runtime"))).sort()).toEqual(["assets", "logs", "skills", "tmp"]);
    page.close();
  });

  it("maps provider and settings problems to their codes", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    await expect(page.request("createSession", {}, ORIGIN)).rejects.toMatchObject({ code: "DEFAULT_PROVIDER_NOT_SET" });
    await expect(page.request("createSession", { provider: "codex" }, ORIGIN)).rejects.toMatchObject({ code: "PROVIDER_UNAVAILABLE" });
    await expect(page.request("createSession", { provider: "ollama" }, ORIGIN)).rejects.toMatchObject({ code: "MODEL_REQUIRED" });
    await expect(page.request("createSession", { provider: "claude", workspace: { path: "relative" } }, ORIGIN)).rejects.toMatchObject({
      code: "WORKSPACE_PATH_INVALID",
    });
    await writeFile(join(home, "settings.json"), JSON.stringify({ effortProfiles: { claude: { low: ["--add-dir", "/"] } } }));
    await expect(page.request("createSession", { provider: "claude", effortLevel: "low" }, ORIGIN)).rejects.toMatchObject({
      code: "EFFORT_PROFILE_INVALID",
    });
    page.close();
  });

  it("uses the default provider from settings, and says when it is unavailable", async () => {
    await writeFile(join(home, "settings.json"), JSON.stringify({ defaultProvider: "claude", defaultEffortLevel: "low" }));
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    await expect(page.request("createSession", {}, ORIGIN)).resolves.toMatchObject({ provider: "claude", effortLevel: "low" });
    page.close();
    await core.stop();
    core = await startCore({ ...env, PEDELEC_PROVIDER_PATH: join(home, "empty"), PATH: "/usr/bin:/bin" });
    const again = await CoreConnection.open(core.paths.socketPath);
    await expect(again.request("createSession", {}, ORIGIN)).rejects.toMatchObject({ code: "DEFAULT_PROVIDER_UNAVAILABLE" });
    again.close();
  });

  it("never grants Full Access from a page's request", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    await expect(page.request("createSession", { provider: "claude", access: "full" }, ORIGIN)).rejects.toMatchObject({
      code: "FULL_ACCESS_NOT_GRANTED",
    });
    page.close();
  });

  it("reports a provider that is not installed", async () => {
    core = await startCore({ ...env, PEDELEC_PROVIDER_PATH: join(home, "empty"), PATH: "/usr/bin:/bin" });
    const page = await CoreConnection.open(core.paths.socketPath);
    await expect(page.request("createSession", { provider: "claude" }, ORIGIN)).rejects.toMatchObject({
      code: "PROVIDER_UNAVAILABLE",
      message: expect.stringContaining("not installed") as string,
    });
    page.close();
  });

  it("refuses system folders and Pedelec's own folder as an explicit workspace, whoever asks", async () => {
    core = await startCore(env);
    const client = await CoreConnection.open(core.paths.socketPath);
    for (const path of ["/etc", "/", home, join(home, "run")]) {
      await expect(client.request("createSession", { provider: "claude", workspace: { path } }, ORIGIN)).rejects.toMatchObject({
        code: "WORKSPACE_PATH_INVALID",
      });
    }
    await expect(stat("/etc/.pedelec-runtime")).rejects.toMatchObject({ code: "ENOENT" });
    client.close();
  });

  it("lists every provider with a reason for the unavailable ones, and shows pages only the public settings", async () => {
    await writeFile(
      join(home, "settings.json"),
      JSON.stringify({ defaultProvider: "claude", defaultModels: { claude: "opus" }, providers: { claude: { path: join(standInDir, "claude") } } }),
    );
    core = await startCore({ ...env, PEDELEC_PROVIDER_PATH: join(home, "empty"), PATH: "/usr/bin:/bin" });
    const page = await CoreConnection.open(core.paths.socketPath);
    const providers = await page.request("listProviders", {}, ORIGIN);
    expect(providers.map((provider) => provider.code)).toEqual(["codex", "antigravity", "opencode", "cursor", "claude", "ollama"]);
    // Found through the path `pedelec install` recorded, though it is on no search path.
    expect(providers.find((provider) => provider.code === "claude")).toEqual({ code: "claude", name: "Claude Code", available: true, error: null });
    for (const provider of providers.filter((candidate) => !candidate.available)) expect(provider.error).toMatch(/\S/);
    expect(await page.request("getSettings", {}, ORIGIN)).toEqual({
      defaultProvider: "claude",
      defaultEffortLevel: "medium",
      defaultModels: { claude: "opus" },
    });

    // A broken edit is reported and the last good settings stay in force.
    await writeFile(join(home, "settings.json"), "{ not json");
    expect(await page.request("getSettings", {}, ORIGIN)).toMatchObject({ defaultProvider: "claude" });
    page.close();
  });

  it("finds a provider where the user's login shell would, when Core was started with a bare PATH", async () => {
    const shell = join(home, "login-shell");
    // A login shell whose profile adds the provider's folder to PATH (and greets, as profiles do).
    await writeFile(shell, `#!/bin/sh\necho "Welcome"\nPATH="${standInDir}:$PATH"\nshift 3\neval "$1"\n`, { mode: 0o755 });
    core = await startCore({ ...env, PEDELEC_PROVIDER_PATH: "", PATH: "/usr/bin:/bin", SHELL: shell });
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page);
    const { sessionId } = await page.request("createSession", { provider: "claude" }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: found" }, ORIGIN);
    expect(await events.until("chat-completed")).toMatchObject({ text: "found" });
    page.close();
  });

  it("keeps a session to its origin, and does not tell another origin that it exists", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const { sessionId } = await page.request("createSession", { provider: "claude" }, ORIGIN);
    const unknownId = "00000000-0000-4000-8000-000000000000";
    const answer = (id: string, origin: string) =>
      page.request("resumeSession", { sessionId: id }, origin).then(
        () => "resumed",
        (error: { code: string; message: string }) => `${error.code}: ${error.message.replace(id, "<id>")}`,
      );
    // Another origin's session and an id nobody has get the very same answer.
    expect(await answer(sessionId, "https://other.example")).toBe(await answer(unknownId, "https://other.example"));
    expect(await answer(sessionId, "https://other.example")).toMatch(/^THREAD_NOT_FOUND: /);
    await expect(page.request("sendText", { sessionId, turnId: "t1", text: "hi" }, "https://other.example")).rejects.toMatchObject({
      code: "THREAD_NOT_FOUND",
    });
    await expect(page.request("resumeSession", { sessionId: unknownId }, ORIGIN)).rejects.toMatchObject({ code: "THREAD_NOT_FOUND" });
    page.close();
  });

  it("lets only a session's own agent reach its tools: the thread id alone is not enough", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page);
    const skills = { guidance: "", tools };
    const victim = await page.request("createSession", { provider: "claude", skills }, "https://victim.example");
    const attacker = await page.request("createSession", { provider: "claude", skills }, ORIGIN);
    await page.request("sendText", { sessionId: victim.sessionId, turnId: "v1", text: "hang" }, "https://victim.example");
    await page.request("sendText", { sessionId: attacker.sessionId, turnId: "a1", text: "hang" }, ORIGIN);
    const victimCapability = await capabilityOfHangingAgent(victim.workspace.path);
    const attackerCapability = await capabilityOfHangingAgent(attacker.workspace.path);
    expect(attackerCapability).not.toBe(victimCapability);
    expect(attackerCapability).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const agent = await CoreConnection.open(core.paths.socketPath);
    const call = (threadId: string, capability: string) =>
      agent.request("toolCall", { threadId, capability, toolName: "add_todo", argsJson: '{"title":"stolen"}' }).then(
        () => "called",
        (error: { code: string; message: string }) => `${error.code}: ${error.message.replace(threadId, "<id>")}`,
      );
    // The attacker's agent knows the victim's thread id (it could list workspaces) but only its own capability.
    const crossSession = await call(victim.sessionId, attackerCapability);
    expect(crossSession).toMatch(/^THREAD_ACCESS_DENIED: /);
    expect(await call("00000000-0000-4000-8000-000000000000", attackerCapability)).toBe(crossSession);
    expect(await call(victim.sessionId, "A".repeat(43))).toBe(crossSession);
    await expect(
      agent.request("toolSpec", { threadId: victim.sessionId, capability: attackerCapability, toolName: "add_todo" }),
    ).rejects.toMatchObject({
      code: "THREAD_ACCESS_DENIED",
    });
    expect(events.seen.some((event) => event.type === "tool-call-requested")).toBe(false);
    // With its own capability the victim's agent still reaches its page.
    await expect(
      agent.request("toolSpec", { threadId: victim.sessionId, capability: victimCapability, toolName: "add_todo" }),
    ).resolves.toMatchObject({
      name: "add_todo",
    });
    agent.close();
    page.close();
  });

  it("runs a turn, refuses a second one, and passes tool calls to the page and back", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page);
    const { sessionId, workspace } = await page.request("createSession", { provider: "claude", skills: { guidance: "", tools } }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
    await expect(page.request("sendText", { sessionId, turnId: "turn-2", text: "again" }, ORIGIN)).rejects.toMatchObject({ code: "SESSION_BUSY" });
    await events.until("turn-started");
    const capability = await capabilityOfHangingAgent(workspace.path);

    // The agent side, as pedelec-cli would speak it.
    const agent = await CoreConnection.open(core.paths.socketPath);
    await expect(
      agent.request("toolCall", { threadId: sessionId, capability, toolName: "add_todo", argsJson: '{"title":""}' }),
    ).rejects.toMatchObject({
      code: "TOOL_ARGS_INVALID",
    });
    await expect(agent.request("toolCall", { threadId: sessionId, capability, toolName: "nope", argsJson: "{}" })).rejects.toMatchObject({
      code: "TOOL_NOT_FOUND",
    });
    expect(events.seen.some((event) => event.type === "tool-call-requested")).toBe(false);
    const spec = await agent.request("toolSpec", { threadId: sessionId, capability, toolName: "add_todo" });
    expect(spec).toMatchObject({ name: "add_todo", timeoutMs: 2_000, argsSchema: { required: ["title"] } });

    const call = agent.request("toolCall", { threadId: sessionId, capability, toolName: "add_todo", argsJson: '{"title":"Milk"}' });
    const requested = await events.until("tool-call-requested");
    expect(requested).toMatchObject({ toolName: "add_todo", args: { title: "Milk" }, turnId: "turn-1" });
    await events.until("status-changed");
    expect(events.seen).toContainEqual({ type: "status-changed", status: "waiting_tool_result", turnId: "turn-1" });
    const submitted = await page.request(
      "submitToolResult",
      { sessionId, toolRequestId: requested.toolRequestId, outcome: { ok: true, result: { id: "c1" } } },
      ORIGIN,
    );
    expect(submitted).toEqual({ accepted: true });
    await expect(call).resolves.toEqual({ result: { id: "c1" } });

    // A handler failure reaches the agent as its coded error.
    const failing = agent.request("toolCall", { threadId: sessionId, capability, toolName: "add_todo", argsJson: '{"title":"Eggs"}' });
    const second = await new Promise<string>((resolvePromise) => {
      const check = setInterval(() => {
        const found = events.seen.filter((event) => event.type === "tool-call-requested");
        if (found.length === 2) {
          clearInterval(check);
          resolvePromise((found[1] as { toolRequestId: string }).toolRequestId);
        }
      }, 5);
    });
    await page.request(
      "submitToolResult",
      { sessionId, toolRequestId: second, outcome: { ok: false, error: { code: "TOOL_HANDLER_ERROR", message: "board is locked" } } },
      ORIGIN,
    );
    await expect(failing).rejects.toMatchObject({ code: "TOOL_HANDLER_ERROR", message: "board is locked" });

    // Ending during the turn kills the provider and fails the turn with SESSION_ENDED.
    await expect(page.request("endSession", { sessionId }, ORIGIN)).resolves.toEqual({ ended: true });
    const failed = await events.until("turn-failed");
    expect(failed.error.code).toBe("SESSION_ENDED");
    await events.until("session-ended");
    await expect(page.request("sendText", { sessionId, turnId: "turn-3", text: "hi" }, ORIGIN)).rejects.toMatchObject({ code: "SESSION_ENDED" });
    agent.close();
    page.close();
  });

  it("cancels a turn: the provider is stopped, the turn fails with TURN_CANCELLED and the session is idle again", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page);
    const { sessionId } = await page.request("createSession", { provider: "claude" }, ORIGIN);
    await expect(page.request("cancelTurn", { sessionId }, ORIGIN)).resolves.toEqual({ cancelled: false });
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
    await events.until("turn-started");
    await expect(page.request("cancelTurn", { sessionId }, ORIGIN)).resolves.toEqual({ cancelled: true });
    expect((await events.until("turn-failed")).error.code).toBe("TURN_CANCELLED");
    // The session is idle again by the time the turn is reported over.
    await expect
      .poll(() => events.seen.slice(-2))
      .toEqual([
        { type: "status-changed", status: "idle", turnId: "turn-1" },
        { type: "turn-failed", turnId: "turn-1", turnKind: "user", error: { code: "TURN_CANCELLED", message: "the turn was cancelled" } },
      ]);
    await page.request("sendText", { sessionId, turnId: "turn-2", text: "reply: back" }, ORIGIN);
    expect(await events.until("turn-completed")).toMatchObject({ turnId: "turn-2" });
    page.close();
  });

  it("stops a turn no page follows any more after the grace, unless a route comes back in time", async () => {
    await writeFile(join(home, "settings.json"), JSON.stringify({ unfollowedTurnGraceMs: 1_000 }));
    core = await startCore(env);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const hangingAgent = async (workspacePath: string) => {
      await capabilityOfHangingAgent(workspacePath);
      return Number(await readFile(join(workspacePath, ".stand-in-hanging"), "utf8"));
    };

    // The route comes back within the grace (an extension reconnecting and resubscribing): the turn goes on.
    const first = await CoreConnection.open(core.paths.socketPath);
    const kept = await first.request("createSession", { provider: "claude" }, ORIGIN);
    await first.request("sendText", { sessionId: kept.sessionId, turnId: "t1", text: "hang" }, ORIGIN);
    const keptAgent = await hangingAgent(kept.workspace.path);
    first.close();
    const reconnected = await CoreConnection.open(core.paths.socketPath);
    await reconnected.request("subscribeSession", { sessionId: kept.sessionId }, ORIGIN);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 2_000));
    expect(alive(keptAgent)).toBe(true);
    expect((await reconnected.request("resumeSession", { sessionId: kept.sessionId }, ORIGIN)).status).toBe("running");

    // Nobody comes back: the agent is stopped and the session is idle again.
    const lost = await reconnected.request("createSession", { provider: "claude" }, ORIGIN);
    await reconnected.request("sendText", { sessionId: lost.sessionId, turnId: "t2", text: "hang" }, ORIGIN);
    const lostAgent = await hangingAgent(lost.workspace.path);
    reconnected.close();
    const closedAt = Date.now();
    await expect.poll(() => alive(lostAgent) || alive(keptAgent), { timeout: 10_000, interval: 50 }).toBe(false);
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(900);
    // The agent's group is gone; Core then ends the turn, once it has seen the process close.
    const observer = await CoreConnection.open(core.paths.socketPath);
    await expect
      .poll(async () => (await observer.request("resumeSession", { sessionId: lost.sessionId }, ORIGIN)).status, { timeout: 10_000, interval: 50 })
      .toBe("idle");
    observer.close();
  });

  it("starts a fresh conversation, with the whole first prompt, when the provider lost the one it should resume", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page);
    const { sessionId } = await page.request("createSession", { provider: "claude" }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: first" }, ORIGIN);
    await events.until("turn-completed");
    // Claude Code's state is gone (deleted, or another machine): --resume answers "No conversation found".
    await rm(join(home, "claude-state"), { recursive: true, force: true });
    await page.request("sendText", { sessionId, turnId: "turn-2", text: "report-resume" }, ORIGIN);
    await expect.poll(() => events.seen.filter((event) => event.type === "turn-completed").length, { timeout: 10_000 }).toBe(2);
    const restarted = events.seen.find((event) => event.type === "activity-updated");
    expect(restarted).toMatchObject({ turnId: "turn-2", activity: { kind: "other", title: expect.stringContaining("started a new one") } });
    const answers = events.seen.flatMap((event) => (event.type === "chat-completed" ? [event.text] : []));
    expect(answers).toEqual(["first", "resumed=none"]);
    expect(events.seen.some((event) => event.type === "turn-failed")).toBe(false);
    // The next turn resumes the new conversation.
    await page.request("sendText", { sessionId, turnId: "turn-3", text: "report-resume" }, ORIGIN);
    await expect.poll(() => events.seen.filter((event) => event.type === "turn-completed").length, { timeout: 10_000 }).toBe(3);
    expect(events.seen.flatMap((event) => (event.type === "chat-completed" ? [event.text] : [])).at(-1)).toMatch(/^resumed=[0-9a-f-]{36}$/);
    page.close();
  });

  it("snapshots the effort profile at creation: later settings edits do not reach the session", async () => {
    await writeFile(join(home, "settings.json"), JSON.stringify({ effortProfiles: { claude: { high: ["--effort", "high"] } } }));
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page);
    const { sessionId } = await page.request("createSession", { provider: "claude", effortLevel: "high", model: "opus" }, ORIGIN);
    await writeFile(join(home, "settings.json"), JSON.stringify({ effortProfiles: { claude: { high: ["--effort", "low"] } } }));
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "report-args" }, ORIGIN);
    const argv = JSON.parse((await events.until("chat-completed")).text) as string[];
    expect(argv).toEqual(expect.arrayContaining(["-p", "--output-format", "stream-json", "--verbose", "--model", "opus"]));
    expect(argv.slice(argv.indexOf("--effort"), argv.indexOf("--effort") + 2)).toEqual(["--effort", "high"]);
    page.close();
  });

  it("runs an explicit model and effort in place of the effort profile, keeps them across a restart, and refuses what the CLI lacks", async () => {
    // A configured profile that must not apply: the explicit effort takes its place.
    await writeFile(
      join(home, "settings.json"),
      JSON.stringify({ defaultEffortLevel: "low", effortProfiles: { claude: { low: ["--effort", "low"] } } }),
    );
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page);
    const info = await page.request("createSession", { provider: "claude", model: "opus", effort: "max" }, ORIGIN);
    expect(info).toMatchObject({ provider: "claude", model: "opus", effort: "max", effortLevel: null });
    await page.request("sendText", { sessionId: info.sessionId, turnId: "turn-1", text: "report-args" }, ORIGIN);
    const argv = JSON.parse((await events.until("chat-completed")).text) as string[];
    expect(argv.slice(argv.indexOf("--model"), argv.indexOf("--model") + 2)).toEqual(["--model", "opus"]);
    expect(argv.filter((token) => token === "--effort")).toHaveLength(1);
    expect(argv.slice(argv.indexOf("--effort"), argv.indexOf("--effort") + 2)).toEqual(["--effort", "max"]);
    // A profile session still reports its level, and no explicit effort.
    await expect(page.request("createSession", { provider: "claude", model: "opus" }, ORIGIN)).resolves.toMatchObject({
      effortLevel: "low",
      effort: null,
    });

    // The schema's rules: effort needs its model, replaces effortLevel, and is one of the five levels.
    await expect(page.request("createSession", { provider: "claude", effort: "high" }, ORIGIN)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("effort requires model"),
    });
    await expect(
      page.request("createSession", { provider: "claude", model: "opus", effort: "high", effortLevel: "low" }, ORIGIN),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("effortLevel cannot be combined with effort"),
    });
    await expect(page.request("createSession", { provider: "claude", model: "opus", effort: "ultra" } as never, ORIGIN)).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    page.close();
    await core.stop();

    core = await startCore(env);
    const again = await CoreConnection.open(core.paths.socketPath);
    await expect(again.request("resumeSession", { sessionId: info.sessionId }, ORIGIN)).resolves.toMatchObject({
      model: "opus",
      effort: "max",
      effortLevel: null,
    });
    again.close();
  });

  it("times a tool call out with TOOL_TIMEOUT", async () => {
    core = await startCore(env);
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page);
    const quick = [{ ...tools[0]!, timeoutMs: 100 }];
    const { sessionId, workspace } = await page.request("createSession", { provider: "claude", skills: { guidance: "", tools: quick } }, ORIGIN);
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
    await events.until("turn-started");
    const capability = await capabilityOfHangingAgent(workspace.path);
    const agent = await CoreConnection.open(core.paths.socketPath);
    await expect(
      agent.request("toolCall", { threadId: sessionId, capability, toolName: "add_todo", argsJson: '{"title":"x"}' }),
    ).rejects.toMatchObject({
      code: "TOOL_TIMEOUT",
    });
    expect(await events.until("tool-call-settled")).toMatchObject({ outcome: "timed-out" });
    agent.close();
    page.close();
  });
});
