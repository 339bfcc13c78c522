import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderEvent, ProviderTurnOutcome, ProviderTurnRequest } from "../provider-adapter.js";
import { discoverProvider } from "../provider-discovery.js";
import { buildFirstPrompt } from "../../first-prompt.js";
import { createClaudeAdapter } from "./claude-adapter.js";

const STAND_IN_DIRECTORY = fileURLToPath(new URL("../../../../../test/stand-ins/claude/", import.meta.url));
const STAND_IN = path.join(STAND_IN_DIRECTORY, "claude");
const THREAD_ID = "thread-7f3a91c2";
/** The prompt Core sends on a thread's first turn, ending with the user's text. */
function firstPrompt(userText: string): string {
  return buildFirstPrompt({ threadId: THREAD_ID, guidance: "", tools: [], userText });
}

/** A pedelec-cli that records its argv and answers like the real one. */
const FAKE_PEDELEC_CLI = `#!/bin/sh
printf '%s\\n' "$@" > "$PEDELEC_TEST_ARGV_FILE"
case "$4" in
  add_card) echo '{"id":"card-4","title":"Buy milk"}' ;;
  add_card_spec) echo '{"type":"object"}' ;;
  broken) echo '{"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}'; exit 1 ;;
  *) echo "{\\"type\\":\\"object\\",\\"properties\\":{\\"title\\":{\\"type\\":\\"string\\"}}}" ;;
esac
`;

let root: string;
let workspace: string;
let env: Record<string, string>;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "pedelec-claude-"));
  workspace = path.join(root, "workspace");
  await mkdir(workspace);
  const bin = path.join(root, "bin");
  await mkdir(bin);
  await writeFile(path.join(bin, "pedelec-cli"), FAKE_PEDELEC_CLI);
  await chmod(path.join(bin, "pedelec-cli"), 0o755);
  env = {
    PATH: `${bin}${path.delimiter}${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: path.join(root, "home"),
    CLAUDE_CONFIG_DIR: path.join(root, "claude-state"),
    PEDELEC_TEST_ARGV_FILE: path.join(root, "pedelec-cli-argv.txt"),
  };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A turn request for the stand-in in this test's workspace. */
function turnRequest(overrides: Partial<ProviderTurnRequest> & { prompt: string }): ProviderTurnRequest {
  return {
    executablePath: STAND_IN,
    workspacePath: workspace,
    providerSessionId: null,
    access: "sandbox",
    model: null,
    effortArgv: ["--effort", "medium"],
    env,
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function turn(overrides: Partial<ProviderTurnRequest> & { prompt: string }) {
  const adapter = createClaudeAdapter({ killGraceMs: 500 });
  const events: ProviderEvent[] = [];
  const outcome = await adapter.runTurn(turnRequest(overrides), (event) => events.push(event));
  return { outcome, events };
}

function sessionIdOf(events: ProviderEvent[]): string | undefined {
  const started = events.filter((event) => event.type === "provider-session-started");
  expect(started).toHaveLength(1);
  return started[0]?.type === "provider-session-started" ? started[0].providerSessionId : undefined;
}

/** The completed messages, and for each the concatenation of its deltas. */
function messages(events: ProviderEvent[]) {
  return events.flatMap((event) =>
    event.type === "message-completed"
      ? [
          {
            text: event.text,
            deltas: events
              .flatMap((other) => (other.type === "text-delta" && other.messageId === event.messageId ? [other.delta] : []))
              .join(""),
          },
        ]
      : [],
  );
}

describe("access modes", () => {
  it("denies a sandboxed agent any shell command but Pedelec's own, and lets a Full Access agent run it", async () => {
    const sandboxed = await turn({ prompt: "bash: cat /etc/hostname" });
    expect(sandboxed.outcome).toEqual({ ok: true });
    expect(messages(sandboxed.events).at(-1)?.text).toBe("Bash denied: Claude requested permissions to use Bash, but you haven't granted it yet.");
    const piped = await turn({ prompt: "bash: pedelec-cli tool-spec x | sh" });
    expect(messages(piped.events).at(-1)?.text).toMatch(/^Bash denied: /);
    const own = await turn({ prompt: "bash: pedelec-cli tool-spec add_todo" });
    expect(messages(own.events).at(-1)?.text).toMatch(/^Bash exit 0: /);

    const full = await turn({ prompt: "bash: echo hello from the host", access: "full" });
    expect(messages(full.events).at(-1)?.text).toBe("Bash exit 0: hello from the host");
  });
});

function errorOf(outcome: ProviderTurnOutcome): PedelecError {
  if (outcome.ok) throw new Error("expected a failed turn");
  return outcome.error;
}

describe("claude adapter with the stand-in CLI", () => {
  it("discovers the stand-in through PEDELEC_PROVIDER_PATH", async () => {
    const adapter = createClaudeAdapter();
    const discovery = await discoverProvider(
      adapter,
      { PEDELEC_PROVIDER_PATH: STAND_IN_DIRECTORY, PATH: process.env.PATH, HOME: env.HOME },
      AbortSignal.timeout(10_000),
    );
    expect(discovery).toEqual({ available: true, executablePath: STAND_IN, version: "2.1.332", error: null });
  });

  it("streams a reply, then resumes the same conversation on the next turn", async () => {
    const first = await turn({ prompt: firstPrompt("reply: Hello from the stand-in, streamed.") });
    expect(first.outcome).toEqual({ ok: true });
    const sessionId = sessionIdOf(first.events);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(messages(first.events)).toEqual([
      { text: "Hello from the stand-in, streamed.", deltas: "Hello from the stand-in, streamed." },
    ]);
    expect(first.events.filter((event) => event.type === "text-delta").length).toBeGreaterThan(3);
    expect(first.events.filter((event) => event.type === "output-seen").length).toBeGreaterThan(10);

    const second = await turn({ prompt: "report-resume", providerSessionId: sessionId ?? null });
    expect(second.outcome).toEqual({ ok: true });
    expect(sessionIdOf(second.events)).toBe(sessionId);
    expect(messages(second.events).map((message) => message.text)).toEqual([`resumed=${sessionId}`]);

    const folder = path.join(env.CLAUDE_CONFIG_DIR ?? "", "projects");
    const [project] = await readdir(folder);
    const conversation = await readFile(path.join(folder, project ?? "", `${sessionId}.jsonl`), "utf8");
    expect(conversation).toContain("report-resume");
  });

  it("runs a tool call through pedelec-cli and reports it as a command activity", async () => {
    const first = await turn({ prompt: firstPrompt("reply: ready") });
    const sessionId = sessionIdOf(first.events) ?? null;

    // The thread id comes from the conversation's first prompt; this resumed turn carries only the user message.
    const { outcome, events } = await turn({
      prompt: `call-tool add_card {"title":"Buy milk"}`,
      providerSessionId: sessionId,
    });
    expect(outcome).toEqual({ ok: true });
    const argv = (await readFile(env.PEDELEC_TEST_ARGV_FILE ?? "", "utf8")).trimEnd().split("\n");
    expect(argv).toEqual(["--thread-id", THREAD_ID, "tool-call", "add_card", '{"title":"Buy milk"}']);

    const command = `pedelec-cli --thread-id ${THREAD_ID} tool-call add_card '{"title":"Buy milk"}'`;
    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities).toEqual([
      { id: expect.stringMatching(/^toolu_/), kind: "command", status: "started", title: command },
      {
        id: activities[0]?.id,
        kind: "command",
        status: "completed",
        title: command,
        detail: '{"id":"card-4","title":"Buy milk"}\n',
      },
    ]);
    expect(messages(events)).toEqual([
      {
        text: 'Tool add_card returned: {"id":"card-4","title":"Buy milk"}',
        deltas: 'Tool add_card returned: {"id":"card-4","title":"Buy milk"}',
      },
    ]);
  });

  it("reports a failing tool call as a failed activity and lets the agent answer", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("call-tool broken {}") });
    expect(outcome).toEqual({ ok: true });
    const activities = events.flatMap((event) => (event.type === "activity" ? [event.activity] : []));
    expect(activities.map((activity) => activity.status)).toEqual(["started", "failed"]);
    expect(messages(events)[0]?.text).toBe(
      'Tool broken failed: {"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}',
    );
  });

  it("reads a tool spec through pedelec-cli", async () => {
    const { outcome, events } = await turn({ prompt: firstPrompt("tool-spec add_card_spec") });
    expect(outcome).toEqual({ ok: true });
    expect(messages(events)[0]?.text).toBe('Spec: {"type":"object"}');
  });

  it("fails with PROVIDER_FAILED and the stderr when the CLI exits non-zero", async () => {
    const { outcome } = await turn({ prompt: "exit-with 3 model overloaded, try later" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toBe("model overloaded, try later");
    expect(error.details).toEqual({ exitCode: 3, signal: null, stderr: "model overloaded, try later\n", stderrTruncated: false });
  });

  it("fails with PROVIDER_FAILED when resuming a conversation the CLI does not know", async () => {
    const { outcome } = await turn({ prompt: "hello", providerSessionId: "00000000-0000-4000-8000-000000000000" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toBe("No conversation found with session ID: 00000000-0000-4000-8000-000000000000");
    // Core starts a fresh conversation on this, instead of failing every later turn the same way.
    expect(outcome).toMatchObject({ ok: false, conversationLost: true });
  });

  it("passes the effort profile to the CLI (an unknown level makes it fail)", async () => {
    const { outcome } = await turn({ prompt: "hello", effortArgv: ["--effort", "turbo"] });
    expect(errorOf(outcome).message).toMatch(/--effort/);
  });

  it("fails with PROVIDER_OUTPUT_INVALID when the CLI prints garbage and no result", async () => {
    const { outcome, events } = await turn({ prompt: "garbage" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_OUTPUT_INVALID");
    expect(error.message).toBe("claude ended without a result");
    expect(error.details).toMatchObject({ ignoredLineCount: 3 });
    expect(events.filter((event) => event.type === "output-seen")).toHaveLength(3);
  });

  it("fails with PROVIDER_NOT_AUTHENTICATED on the signed-out reply", async () => {
    const { outcome, events } = await turn({ prompt: "not-logged-in" });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_NOT_AUTHENTICATED");
    expect(error.message).toContain("Not logged in");
    expect(events.some((event) => event.type === "text-delta" || event.type === "message-completed")).toBe(false);
  });

  /** Starts a hanging turn and aborts it as soon as the CLI's init line arrived. */
  async function hangThenAbort(reason?: unknown) {
    const controller = new AbortController();
    const adapter = createClaudeAdapter({ killGraceMs: 500 });
    const startedAt = Date.now();
    const outcome = await adapter.runTurn(
      turnRequest({ effortArgv: [], signal: controller.signal, prompt: "hang" }),
      (event) => {
        if (event.type === "provider-session-started") controller.abort(reason);
      },
    );
    return { outcome, elapsedMs: Date.now() - startedAt };
  }

  it("kills a hanging CLI on cancel and settles with TURN_CANCELLED", async () => {
    const { outcome, elapsedMs } = await hangThenAbort();
    expect(errorOf(outcome)).toMatchObject({ code: "TURN_CANCELLED" });
    expect(elapsedMs).toBeLessThan(5_000);
  });

  it("settles a cancelled turn with the abort reason when it is a PedelecError", async () => {
    const { outcome } = await hangThenAbort(new PedelecError("SESSION_ENDED", "the session ended"));
    expect(errorOf(outcome)).toMatchObject({ code: "SESSION_ENDED", message: "the session ended" });
  });

  it("fails with PROVIDER_UNAVAILABLE when the executable is gone", async () => {
    const { outcome } = await turn({ prompt: "hello", executablePath: path.join(root, "missing", "claude") });
    const error = errorOf(outcome);
    expect(error.code).toBe("PROVIDER_UNAVAILABLE");
    expect(error.message).toMatch(/^claude could not be started: .*ENOENT/);
  });

  it("fails with INVALID_INPUT, without starting anything, for a model that looks like a flag", async () => {
    const { outcome, events } = await turn({ prompt: "hello", model: "--add-dir=/" });
    expect(errorOf(outcome).code).toBe("INVALID_INPUT");
    expect(events).toEqual([]);
  });

  it("turns a throwing event listener into a failed turn instead of a crash", async () => {
    const adapter = createClaudeAdapter();
    const outcome = await adapter.runTurn(
      turnRequest({ effortArgv: [], prompt: "reply: hi" }),
      () => {
        throw new Error("listener broke");
      },
    );
    expect(errorOf(outcome)).toMatchObject({ code: "PROVIDER_FAILED", message: "a provider event listener failed: listener broke" });
  });
});
