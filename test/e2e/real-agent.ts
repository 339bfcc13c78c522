import { createServer } from "node:net";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { isZombie } from "@pedelec/core/process-stat";
import { startAnthropicMessagesServer } from "../model-servers/anthropic-messages-server.js";
import { startChatCompletionsServer } from "../model-servers/chat-completions-server.js";
import type { ModelReply, ModelRequest, ModelServer } from "../model-servers/model-server-types.js";
import { startOpenAiResponsesServer } from "../model-servers/openai-responses-server.js";
import { privateCliEnvironment, type PrivateCliEnvironment } from "../real-clis/cli-environment.js";
import { realCliBinDir, realCliPath, type RealCli } from "../real-clis/real-clis.js";
import { answerApproval, openSdkPage, setUpE2e, type E2eEnvironment } from "./harness.js";
import { attempt, installRecorder } from "./page-scripts.js";

/** The model server each real CLI talks to, in the wire format that CLI speaks. */
export const MODEL_SERVERS: Record<RealCli, () => Promise<ModelServer>> = {
  claude: startAnthropicMessagesServer,
  codex: startOpenAiResponsesServer,
  opencode: startChatCompletionsServer,
};

export interface RealAgentEnvironment {
  cli: RealCli;
  e2e: E2eEnvironment;
  /** The scripted model the CLI is pointed at (null for an environment whose endpoint refuses connections). */
  server: ModelServer | null;
  cliEnvironment: PrivateCliEnvironment;
  close(): Promise<void>;
}

export interface RealAgentOptions {
  /** `pedelec config set` pairs applied before the first session, as a user would. */
  settings?: Record<string, string>;
  /** Point the CLI at a loopback port where nothing listens, instead of a model server. */
  refusedEndpoint?: boolean;
  /** Variables added to the CLI's environment (through the browser's, which Core and the CLI inherit). */
  extraEnv?: Record<string, string>;
}

/**
 * Real Chromium, the extension, the native host and Core (as in every e2e test), with the pinned real CLI found first on
 * the provider path, a private HOME and TMPDIR for it, and its gateway pointed at a scripted model server on loopback.
 */
export async function setUpRealAgent(cli: RealCli, options: RealAgentOptions = {}): Promise<RealAgentEnvironment> {
  realCliPath(cli);
  const folder = await mkdtemp(join(tmpdir(), `pedelec-e2e-real-${cli}-`));
  let server: ModelServer | null = null;
  let e2e: E2eEnvironment | undefined;
  try {
    let url: string;
    if (options.refusedEndpoint) {
      url = `http://127.0.0.1:${await closedPort()}${cli === "claude" ? "" : "/v1"}`;
    } else {
      server = await MODEL_SERVERS[cli]();
      url = server.url;
    }
    const cliEnvironment = await privateCliEnvironment(cli, { url }, folder);
    e2e = await setUpE2e({ providerPath: realCliBinDir, extraEnv: { ...cliEnvironment.env, ...options.extraEnv } });
    for (const [key, value] of Object.entries(options.settings ?? {})) {
      const set = await e2e.pedelec("config", "set", key, value);
      if (set.code !== 0) throw new Error(`pedelec config set ${key} failed: ${set.stderr}`);
    }
    const started = e2e;
    return {
      cli,
      e2e: started,
      server,
      cliEnvironment,
      async close() {
        await started.close();
        await server?.close();
        await rm(folder, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      },
    };
  } catch (error) {
    await e2e?.close();
    await server?.close();
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}

/** A loopback port nothing listens on (it was just free, and is closed again). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A page tool whose handler waits until the call is aborted (the turn's cancel, its end, or the tool timeout), so a
 * test can act while the agent's `pedelec-cli tool-call` is running. Calls are counted in `window.slowCalls`.
 */
const SLOW_TOOL = "wait_for_user";

export interface RealAgentSession {
  page: Page;
  sessionId: string;
  workspacePath: string;
}

/**
 * Opens the SDK test page and creates a session with the real CLI (`add_todo` and the slow tool registered); answers
 * the approval window when `approve` is set (the origin's first session).
 */
export async function openRealAgentSession(
  environment: RealAgentEnvironment,
  {
    approve = false,
    access = "sandbox",
    create = {},
  }: { approve?: boolean; access?: "sandbox" | "full" /** More createSession input (model, effort). */; create?: Record<string, unknown> } = {},
): Promise<RealAgentSession> {
  const page = await openSdkPage(environment.e2e);
  await installRecorder(page);
  await page.evaluate((slowTool) => {
    const w = window as unknown as Record<string, any>;
    w.slowCalls = 0;
    w.tools.push(w.sdk.defineTool({ name: slowTool, description: "Wait until the user answers", argsSchema: { type: "object", properties: {} } }));
    const record = w.record;
    w.record = (session: any) => {
      record(session);
      session.onTool(slowTool, (_args: unknown, context: { signal: AbortSignal }) => {
        w.slowCalls += 1;
        return new Promise((_resolve, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason), { once: true }));
      });
    };
  }, SLOW_TOOL);
  const created = attempt<{ sessionId: string; workspace: { path: string } }>(
    page,
    `return await window.create(${JSON.stringify({ ...create, provider: environment.cli, access })});`,
  );
  if (approve) await answerApproval(environment.e2e.context, new URL(environment.e2e.server.url).origin, "approve");
  const result = await created;
  if (!result.ok) throw new Error(`createSession failed: ${result.code} ${result.message}`);
  return { page, sessionId: result.value.sessionId, workspacePath: result.value.workspace.path };
}

/** The shell command a model writes to call a page tool, exactly as the first prompt tells it. */
export function toolCallCommand(sessionId: string, toolName: string, args: Record<string, unknown>): string {
  return `pedelec-cli --thread-id ${sessionId} tool-call ${toolName} '${JSON.stringify(args)}'`;
}

/** How a CLI that loads the session's MCP server offers the page's tools to its model. */
export interface NativePageTools {
  /** The CLI's name for an app tool, as the first prompt gives it (`<name>` stands for any). */
  promptName(toolName: string): string;
  /** The model's call of a page tool, by the name the CLI advertises to it. */
  call(toolName: string, args: Record<string, unknown>): ModelReply;
  /** Whether a model request offers the tool: in its tool list, or (codex) as a deferred namespace it names. */
  offered(request: ModelRequest, toolName: string): boolean;
}

/** Each real CLI's native page tools, or null where the agent calls page tools through pedelec-cli in its shell. */
export const NATIVE_PAGE_TOOLS: Record<RealCli, NativePageTools | null> = {
  claude: {
    promptName: (toolName) => `mcp__pedelec__${toolName}`,
    call: (toolName, args) => ({ kind: "tool", name: `mcp__pedelec__${toolName}`, input: args }),
    offered: (request, toolName) => request.toolNames.includes(`mcp__pedelec__${toolName}`),
  },
  // codex 0.169 defers MCP tools behind its tool_search tool: the request names the namespace, not its functions.
  codex: {
    promptName: (toolName) => `${toolName} (in the tool namespace mcp__pedelec)`,
    call: (toolName, args) => ({ kind: "tool", name: toolName, namespace: "mcp__pedelec", input: args }),
    offered: (request) => JSON.stringify(request.body).includes("- mcp__pedelec"),
  },
  opencode: {
    promptName: (toolName) => `pedelec_${toolName}`,
    call: (toolName, args) => ({ kind: "tool", name: `pedelec_${toolName}`, input: args }),
    offered: (request, toolName) => request.toolNames.includes(`pedelec_${toolName}`),
  },
};

/** The model's call of a page tool, the way the first prompt tells this CLI to make it. */
export function pageToolCall(cli: RealCli, sessionId: string, toolName: string, args: Record<string, unknown>): ModelReply {
  const native = NATIVE_PAGE_TOOLS[cli];
  return native === null ? { kind: "shell", command: toolCallCommand(sessionId, toolName, args) } : native.call(toolName, args);
}

export const slowToolCall = (cli: RealCli, sessionId: string): ModelReply => pageToolCall(cli, sessionId, SLOW_TOOL, {});

export interface SessionProcess {
  pid: number;
  /** The command line, arguments separated by spaces. */
  commandLine: string;
  /** Its session id (from /proc/<pid>/stat): a command the CLI started in a session of its own shows it here. */
  sid: number;
}

/**
 * Every live process started for session `sessionId`, found by walking /proc for the PEDELEC_THREAD_ID Core puts in
 * the provider's environment (children inherit it, also those in a session or process group of their own, and those
 * reparented to PID 1 when their parent died).
 */
export async function sessionProcesses(sessionId: string): Promise<SessionProcess[]> {
  const marker = `PEDELEC_THREAD_ID=${sessionId}`;
  const found: SessionProcess[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, "utf8").catch(() => "");
    if (!environ.split("\0").includes(marker) || isZombie(Number(entry))) continue;
    const commandLine = (await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")).split("\0").join(" ").trim();
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // The fields after the command's parenthesised name: state ppid pgrp session …
    const sid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
    found.push({ pid: Number(entry), commandLine, sid });
  }
  return found;
}

/** Waits (up to `timeoutMs`) until no process of the session is left; returns what was still there at the deadline. */
export async function waitForNoSessionProcesses(sessionId: string, timeoutMs = 10_000): Promise<SessionProcess[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = await sessionProcesses(sessionId);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Kills what a failed test may have left of a session (the assertions already said so). */
export async function killSessionProcesses(sessionId: string): Promise<void> {
  for (const { pid } of await sessionProcesses(sessionId)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/**
 * Adds a stdio MCP server named `users_own` to the user's own configuration of the CLI, where a user adds one (claude:
 * `~/.claude.json`, codex: `config.toml`, opencode: its global `opencode.json`); the returned function puts the file
 * back as it was.
 */
export async function addUsersOwnServer(environment: RealAgentEnvironment, command: [string, ...string[]]): Promise<() => Promise<void>> {
  const { home, stateDir } = environment.cliEnvironment;
  const [program, ...args] = command;
  const file = {
    claude: join(home, ".claude.json"),
    codex: join(stateDir, "config.toml"),
    opencode: join(home, ".config", "opencode", "opencode.json"),
  }[environment.cli];
  const before = await readFile(file, "utf8").catch(() => null);
  let text: string;
  if (environment.cli === "codex") {
    text = `${before ?? ""}\n[mcp_servers.users_own]\ncommand = ${JSON.stringify(program)}\nargs = ${JSON.stringify(args)}\n`;
  } else {
    const config = (before === null ? {} : JSON.parse(before)) as Record<string, any>;
    if (environment.cli === "claude") config.mcpServers = { ...config.mcpServers, users_own: { type: "stdio", command: program, args } };
    else config.mcp = { ...config.mcp, users_own: { type: "local", command } };
    text = JSON.stringify(config, null, 2);
  }
  await writeFile(file, text);
  return async () => {
    if (before === null) await rm(file, { force: true });
    else await writeFile(file, before);
  };
}
