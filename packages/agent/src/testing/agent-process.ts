import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { agentEventSchema, type AgentEvent } from "@pedelec/protocol/agent-wire";

const repositoryRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/**
 * Bundles the agent from its TypeScript sources into one file a test can run as a real process with `node`, the way
 * Core runs the built agent. The workspace packages resolve to their sources, as in the unit tests.
 */
export async function buildAgentForTests(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "pedelec-agent-build-"));
  const outfile = join(folder, "pedelec-agent.mjs");
  await build({
    absWorkingDir: repositoryRoot,
    entryPoints: [join(repositoryRoot, "packages/agent/src/agent-entry.ts")],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    alias: {
      "@pedelec/protocol": join(repositoryRoot, "packages/protocol/src"),
      "@pedelec/core": join(repositoryRoot, "packages/core/src"),
    },
    logLevel: "warning",
  });
  return outfile;
}

export interface AgentRunOptions {
  args: string[];
  stdin: string;
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

/** A running agent process: its events (each checked against agent-wire's schema), stderr, and how it ended. */
export interface AgentProcess {
  readonly child: ChildProcess;
  readonly events: AgentEvent[];
  /** Lines on stdout that are not agent events (there should be none). */
  readonly strayLines: string[];
  /** Everything on stdout and stderr, as text. */
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** The first event that matches, already seen or still to come; rejects past the deadline or when the process ends first. */
  nextEvent<T extends AgentEvent["type"]>(type: T, timeoutMs?: number): Promise<Extract<AgentEvent, { type: T }>>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startAgent(entry: string, options: AgentRunOptions): AgentProcess {
  const child = spawn(process.execPath, [entry, ...options.args], {
    cwd: options.cwd ?? tmpdir(),
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const events: AgentEvent[] = [];
  const strayLines: string[] = [];
  let stdout = "";
  let stderr = "";
  let pending = "";
  const wakers = new Set<() => void>();
  const wake = (): void => {
    for (const waker of [...wakers]) waker();
  };
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (text: string) => {
    stdout += text;
    pending += text;
    let newline = pending.indexOf("\n");
    while (newline !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      newline = pending.indexOf("\n");
      let parsed: ReturnType<typeof agentEventSchema.safeParse> | undefined;
      try {
        parsed = agentEventSchema.safeParse(JSON.parse(line));
      } catch {
        parsed = undefined;
      }
      if (parsed?.success) events.push(parsed.data);
      else strayLines.push(line);
    }
    wake();
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text: string) => (stderr += text));
  let ended = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => {
      ended = true;
      wake();
      resolve({ code, signal });
    }),
  );
  child.stdin.on("error", () => undefined);
  child.stdin.end(options.stdin);

  return {
    child,
    events,
    strayLines,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    nextEvent(type, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const found = events.find((event) => event.type === type);
          if (found) {
            wakers.delete(check);
            clearTimeout(timer);
            resolve(found as never);
          } else if (ended || Date.now() > deadline) {
            wakers.delete(check);
            clearTimeout(timer);
            reject(
              new Error(`no ${type} event${ended ? " before the agent exited" : ` within ${timeoutMs} ms`}; stdout: ${stdout} stderr: ${stderr}`),
            );
          }
        };
        const timer = setTimeout(check, timeoutMs + 1);
        wakers.add(check);
        check();
      });
    },
  };
}

/** Runs the agent to its end. */
export async function runAgent(entry: string, options: AgentRunOptions) {
  const agent = startAgent(entry, options);
  const { code, signal } = await agent.exited;
  return { ...agent, code, signal };
}
