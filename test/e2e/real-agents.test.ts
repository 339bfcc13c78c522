// The real Claude Code, Codex and OpenCode CLIs (pinned in test/real-clis), driven from a page in real Chromium through
// the extension, the native host and Core, against scripted model servers on loopback (test/model-servers).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelReply, ModelRequest, ModelServer } from "../model-servers/model-server-types.js";
import { REAL_CLIS, type RealCli } from "../real-clis/real-clis.js";
import { corePidOf, grantFullAccess, nativeHostPidsFor } from "./harness.js";
import { attempt, logOf } from "./page-scripts.js";
import {
  addUsersOwnServer,
  killSessionProcesses,
  NATIVE_PAGE_TOOLS,
  openRealAgentSession,
  pageToolCall,
  sessionProcesses,
  setUpRealAgent,
  slowToolCall,
  waitForNoSessionProcesses,
  type RealAgentEnvironment,
} from "./real-agent.js";

interface CliTraits {
  streamsDeltas: boolean;
  responseTimeoutSeconds: number;
  /** A passing failure the CLI retries on its own, and whether it says so on stdout while it does. */
  passingFailure: ModelReply;
  reportsRetries: boolean;
  /** What the CLI answers the model's shell call in a sandbox session, which has no shell. */
  noShell: RegExp;
  /** An explicit model and effort the CLI takes (the scripted server accepts any model), and an effort it lacks. */
  explicit: { model: string; requestModel: string; effort: string; lacking: string; has: string[] };
}

/** What differs between the three CLIs, as the real ones behave. */
const CLI_TRAITS: Record<RealCli, CliTraits> = {
  // claude prints a system/api_retry line per attempt.
  claude: {
    streamsDeltas: true,
    responseTimeoutSeconds: 15,
    passingFailure: { kind: "error", status: 529 },
    reportsRetries: true,
    noShell: /No such tool available: Bash/,
    // Claude Code has every level; no level is lacking, so the lacking one is checked on another provider only.
    explicit: { model: "claude-scripted-1", requestModel: "claude-scripted-1", effort: "max", lacking: "", has: [] },
  },
  // codex retries a 5xx answer silently, and prints "Reconnecting... n/m" for a stream cut off mid-way.
  codex: {
    streamsDeltas: false,
    responseTimeoutSeconds: 15,
    passingFailure: { kind: "drop-mid-stream", deltas: ["Hel"] },
    reportsRetries: true,
    noShell: /unsupported call: exec_command/,
    explicit: { model: "gpt-5.5", requestModel: "gpt-5.5", effort: "xhigh", lacking: "max", has: ["low", "medium", "high", "xhigh"] },
  },
  // OpenCode retries silently. It alone takes 7-20 s of a loaded 2-core machine to start, silent, before its first
  // request.
  // Its shell call is rewritten to OpenCode's `invalid` tool, whose answer names the tools there are.
  opencode: {
    streamsDeltas: false,
    responseTimeoutSeconds: 30,
    passingFailure: { kind: "error", status: 429 },
    reportsRetries: false,
    noShell: /unavailable tool 'bash'/,
    // The stand-in model's variants are low, medium and high (test/real-clis/cli-environment.ts), and they are what
    // OpenCode has for it: Core asks OpenCode for them.
    explicit: { model: "standin/standin-model", requestModel: "standin-model", effort: "medium", lacking: "xhigh", has: ["low", "medium", "high"] },
  },
};

const send = (page: import("playwright-core").Page, text: string) =>
  page.evaluate((message) => (window as any).send(message), text) as Promise<{ ok: boolean; code?: string; message?: string }>;
const clearLog = (page: import("playwright-core").Page) => page.evaluate(() => ((window as any).log = []));
const kinds = (log: any[], kind: string) => log.filter((entry) => entry.kind === kind);

/** A reply that reports what the CLI gave back from the tool call, so the page sees the model got it. */
const reportToolResult = (request: ModelRequest) => ({ kind: "text" as const, deltas: ["The tool said: ", request.toolResults.join(" | ")] });

for (const cli of REAL_CLIS) {
  const traits = CLI_TRAITS[cli];
  const native = NATIVE_PAGE_TOOLS[cli];

  describe(`the real ${cli} through Pedelec`, () => {
    let environment: RealAgentEnvironment;
    let server: ModelServer;

    beforeAll(async () => {
      environment = await setUpRealAgent(cli, {
        settings: { modelResponseTimeoutSeconds: String(traits.responseTimeoutSeconds) },
        // As root (these machines), claude refuses its Full Access flag without IS_SANDBOX=1 (research/real-clis.md).
        extraEnv: cli === "claude" && process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {},
      });
      server = environment.server!;
      // The origin's first session is approved once; every later one of this file goes through.
      const first = await openRealAgentSession(environment, { approve: true });
      await first.page.close();
    });
    afterAll(async () => {
      await environment?.close();
    });
    beforeEach(() => server.dropScript());

    it(`answers a text turn, then calls a page tool ${native ? "as its own MCP tool" : "with its own shell tool"} in the resumed conversation`, async () => {
      const { page, sessionId } = await openRealAgentSession(environment);
      const before = server.requests.length;
      server.script({ kind: "text", deltas: ["Hello ", "from the ", "real ", cli], usage: { inputTokens: 120, outputTokens: 7 } });
      expect(await send(page, "Say hello")).toEqual({ ok: true });
      let log = await logOf(page);
      const answer = `Hello from the real ${cli}`;
      expect(kinds(log, "chat").map((entry) => entry.text)).toEqual([answer]);
      const deltas = kinds(log, "delta").map((entry) => entry.delta);
      expect(deltas.join("")).toBe(answer);
      if (traits.streamsDeltas) expect(deltas.length).toBeGreaterThan(1);
      // What the CLI sent: the first prompt Pedelec built, with the tool index and the user's words last.
      const firstTurn = server.requests.slice(before).filter((request) => request.purpose === "turn");
      expect(firstTurn.length).toBeGreaterThanOrEqual(1);
      expect(firstTurn[0]!.userText).toContain("[Pedelec Runtime Rules]");
      expect(firstTurn[0]!.userText).toContain("- add_todo: Add a card to the to-do board");
      if (native) {
        expect(firstTurn[0]!.userText).toContain(native.promptName("<name>"));
        // Offered to the model as tools of its own, with their schemas.
        expect(native.offered(firstTurn[0]!, "add_todo")).toBe(true);
        expect(native.offered(firstTurn[0]!, "run_script")).toBe(true);
      }
      expect(firstTurn[0]!.userText.trimEnd().endsWith("[User Message]\nSay hello")).toBe(true);
      // The tokens the model server reported reached the page, as the CLI passed them on.
      const usage = await page.evaluate(() => (window as any).session.usage);
      expect(usage.outputTokens).toBe(7);
      expect(usage.inputTokens).toBeGreaterThanOrEqual(120);

      await clearLog(page);
      const resumedFrom = server.requests.length;
      server.script(pageToolCall(cli, sessionId, "add_todo", { title: "Buy milk" }), reportToolResult);
      expect(await send(page, "Add a card for milk")).toEqual({ ok: true });
      log = await logOf(page);
      expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([{ title: "Buy milk" }]);
      const card = '{"id":"card-1","title":"Buy milk"}';
      const secondTurn = server.requests.slice(resumedFrom).filter((request) => request.purpose === "turn");
      // The conversation was resumed: the CLI replayed the first turn to the model.
      expect(secondTurn[0]!.transcript.map((entry) => entry.text).join("\n")).toContain(answer);
      expect(secondTurn[0]!.userText).toBe("Add a card for milk");
      // The page's result came back to the model as the tool's output, and the turn went on.
      expect(secondTurn.at(-1)!.toolResults.join("\n")).toContain(card);
      expect(kinds(log, "chat").at(-1)?.text).toContain(card);
      expect(kinds(log, "status").map((entry) => entry.status)).toEqual(["running", "waiting_tool_result", "running", "idle"]);
      // onActivity shows the call the CLI really made.
      const calls = kinds(log, "activity").filter((entry) => entry.activity.kind === (native ? "tool" : "command"));
      expect(calls.map((entry) => entry.activity.status)).toContain("completed");
      const title = native ? "add_todo" : `pedelec-cli --thread-id ${sessionId} tool-call add_todo`;
      expect(calls.every((entry) => entry.activity.title.includes(title))).toBe(true);
      await page.close();
    });

    it("runs the model and the explicit effort the page names through the CLI's own setting, and refuses a level it lacks", async () => {
      const { model, requestModel, effort, lacking, has } = traits.explicit;
      const { page } = await openRealAgentSession(environment, { create: { model, effort } });
      const named = await page.evaluate(() => {
        const session = (window as any).session;
        return { model: session.model, effort: session.effort, effortLevel: session.effortLevel ?? null };
      });
      expect(named).toEqual({ model, effort, effortLevel: null });
      const before = server.requests.length;
      server.script({ kind: "text", deltas: ["Done."] });
      expect(await send(page, "Think hard")).toEqual({ ok: true });
      // What the CLI made of it: the model request carries the model and the level in the wire format's own field.
      const turn = server.requests.slice(before).filter((request) => request.purpose === "turn");
      expect(turn[0]).toMatchObject({ model: requestModel, effort });
      if (lacking !== "") {
        const refused = await attempt(page, `return await window.create(${JSON.stringify({ provider: cli, model, effort: lacking })});`);
        expect(refused).toMatchObject({ ok: false, code: "EFFORT_NOT_SUPPORTED", message: expect.stringContaining(`it has ${has.join(", ")}`) });
      }
      await page.close();
    });

    it("stops the CLI and every command it started when the page cancels during a long command", async () => {
      const { page, sessionId } = await openRealAgentSession(environment);
      try {
        server.script(slowToolCall(cli, sessionId));
        const sent = send(page, "Wait for the user");
        await page.waitForFunction(() => (window as any).slowCalls === 1, undefined, { timeout: 60_000 });
        const running = await sessionProcesses(sessionId);
        const caller = native ? /pedelec-cli\S* mcp$/ : /tool-call wait_for_user/;
        expect(running.some((found) => caller.test(found.commandLine))).toBe(true);
        expect(await page.evaluate(() => (window as any).session.cancel().then(() => "cancelled"))).toBe("cancelled");
        expect(await sent).toMatchObject({ ok: false, code: "TURN_CANCELLED" });
        expect(await waitForNoSessionProcesses(sessionId)).toEqual([]);
      } finally {
        await killSessionProcesses(sessionId);
        await page.close();
      }
    });

    if (native) {
      it("answers schema-breaking arguments to the model as an error result with TOOL_ARGS_INVALID, the page untouched", async () => {
        const { page, sessionId } = await openRealAgentSession(environment);
        const from = server.requests.length;
        server.script(pageToolCall(cli, sessionId, "add_todo", { title: 42 }), reportToolResult);
        expect(await send(page, "Add a card numbered 42")).toEqual({ ok: true });
        expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([]);
        const results = server.requests.slice(from).at(-1)!.toolResults.join("\n");
        expect(results).toContain("TOOL_ARGS_INVALID");
        expect(results).toContain('"remedy"');
        await page.close();
      });

      it("has no shell in a sandbox session, while the page's tools still work", async () => {
        const { page, sessionId } = await openRealAgentSession(environment);
        const from = server.requests.length;
        const marker = `/tmp/pedelec-e2e-shell-${sessionId}`;
        server.script(
          { kind: "shell", command: `pedelec-cli --thread-id ${sessionId} tool-spec add_todo > ${marker}; echo ran` },
          pageToolCall(cli, sessionId, "add_todo", { title: "Still works" }),
          reportToolResult,
        );
        expect(await send(page, "Try the shell, then add a card")).toEqual({ ok: true });
        const turn = server.requests.slice(from).filter((request) => request.purpose === "turn");
        // No shell tool is offered at all (claude Bash, codex exec_command, opencode bash).
        expect(turn[0]!.toolNames.filter((name) => /^(bash|exec_command)$/i.test(name))).toEqual([]);
        expect(turn[1]!.toolResults.join("\n")).toMatch(traits.noShell);
        expect(existsSync(marker)).toBe(false);
        expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([{ title: "Still works" }]);
        await page.close();
      });
    }

    if (native) {
      it("leaves the user's own MCP servers out of a sandbox session, and starts them with Full Access", async () => {
        const marker = join(environment.cliEnvironment.tmpdir, "users-own-server-started");
        const restore = await addUsersOwnServer(environment, ["/bin/sh", "-c", `echo started >> ${marker}`]);
        try {
          const sandbox = await openRealAgentSession(environment);
          server.script({ kind: "text", deltas: ["Sandboxed"] });
          expect(await send(sandbox.page, "Hello from the sandbox")).toEqual({ ok: true });
          expect(existsSync(marker)).toBe(false);
          await sandbox.page.close();

          // The same configuration with Full Access: the user's server starts, so the check above could fail.
          await grantFullAccess(environment.e2e, new URL(environment.e2e.server.url).origin);
          const full = await openRealAgentSession(environment, { access: "full" });
          server.script({ kind: "text", deltas: ["Unrestricted"] });
          expect(await send(full.page, "Hello with Full Access")).toEqual({ ok: true });
          expect(existsSync(marker)).toBe(true);
          await full.page.close();
        } finally {
          await restore();
        }
      });
    }

    it("cannot write outside the workspace in a sandbox session", async () => {
      const { page, sessionId } = await openRealAgentSession(environment);
      const outside = `/var/tmp/pedelec-e2e-outside-${sessionId}`;
      server.script({ kind: "shell", command: `touch ${outside}` }, reportToolResult);
      const sent = await send(page, "Write a file outside");
      expect(existsSync(outside)).toBe(false);
      expect(sent).toEqual({ ok: true });
      // The refusal came back to the model as the command's result, and the turn went on to an answer.
      const answer = kinds(await logOf(page), "chat").at(-1)?.text as string;
      expect(answer).toMatch(/^The tool said: /);
      expect(answer.length).toBeGreaterThan("The tool said: ".length);
      await page.close();
    });

    it("reports a refused key as PROVIDER_NOT_AUTHENTICATED within 15 s, without the endpoint or the key", async () => {
      const { page } = await openRealAgentSession(environment);
      server.script(...Array.from({ length: 12 }, () => ({ kind: "error" as const, status: 401 as const, message: "invalid x-api-key" })));
      const startedAt = Date.now();
      const sent = await send(page, "Hello?");
      const elapsedMs = Date.now() - startedAt;
      expect(sent).toMatchObject({ ok: false, code: "PROVIDER_NOT_AUTHENTICATED" });
      expect(elapsedMs).toBeLessThan(15_000);
      expect(sent.message).not.toContain("127.0.0.1");
      expect(sent.message).not.toContain("test-key");
      const errors = kinds(await logOf(page), "error");
      expect(errors.map((entry) => entry.code)).toEqual(["PROVIDER_NOT_AUTHENTICATED"]);
      await page.close();
    });

    it("goes on after a passing model failure, with the retries shown while they happen where the CLI reports them", async () => {
      const { page } = await openRealAgentSession(environment);
      server.script(traits.passingFailure, { kind: "text", deltas: ["Back again"] });
      expect(await send(page, "Are you there?")).toEqual({ ok: true });
      const log = await logOf(page);
      expect(kinds(log, "chat").at(-1)?.text).toBe("Back again");
      if (traits.reportsRetries) {
        const retries = kinds(log, "activity").filter((entry) => /retrying|reconnecting/i.test(entry.activity.title));
        expect(retries.length).toBeGreaterThan(0);
        expect(retries.map((entry) => entry.activity.title).join("\n")).not.toContain("127.0.0.1");
      }
      await page.close();
    });

    it("ends a turn whose model stays overloaded with a retriable code, the CLI's last retry named", async () => {
      const { page, sessionId } = await openRealAgentSession(environment);
      server.script(...Array.from({ length: 40 }, () => ({ kind: "error" as const, status: 429 as const, message: "rate limited" })));
      const startedAt = Date.now();
      const sent = await send(page, "Still there?");
      expect((Date.now() - startedAt) / 1000).toBeLessThan(traits.responseTimeoutSeconds + 10);
      // codex gives up on its own; claude and OpenCode would retry for minutes, so the response timeout ends them.
      expect(sent).toMatchObject({ ok: false, code: cli === "codex" ? "PROVIDER_OVERLOADED" : "PROVIDER_TIMEOUT" });
      if (cli === "claude") expect(sent.message).toMatch(/\(last: Claude is retrying: .*429.*\)$/);
      expect(sent.message).not.toContain("127.0.0.1");
      expect(await waitForNoSessionProcesses(sessionId)).toEqual([]);
      await page.close();
    });

    it("ends a turn whose model accepts the request and never answers with PROVIDER_TIMEOUT, within the bound", async () => {
      const { page, sessionId } = await openRealAgentSession(environment);
      server.script(...Array.from({ length: 8 }, () => ({ kind: "hang" as const })));
      const startedAt = Date.now();
      const sent = await send(page, "Anyone?");
      const elapsedSeconds = (Date.now() - startedAt) / 1000;
      expect(sent).toMatchObject({ ok: false, code: "PROVIDER_TIMEOUT" });
      expect(elapsedSeconds).toBeGreaterThanOrEqual(traits.responseTimeoutSeconds - 1);
      expect(elapsedSeconds).toBeLessThan(traits.responseTimeoutSeconds + 10);
      expect(await waitForNoSessionProcesses(sessionId)).toEqual([]);
      await page.close();
    });

    it("stops the CLI and every command it started when the native host dies mid-turn and no page follows the turn", async () => {
      const { page, sessionId } = await openRealAgentSession(environment);
      try {
        server.script(slowToolCall(cli, sessionId));
        const sent = send(page, "Wait for the user");
        await page.waitForFunction(() => (window as any).slowCalls === 1, undefined, { timeout: 60_000 });
        expect((await sessionProcesses(sessionId)).length).toBeGreaterThan(0);
        const hosts = await nativeHostPidsFor(environment.e2e.home);
        expect(hosts.length).toBeGreaterThan(0);
        for (const pid of hosts) process.kill(pid, "SIGKILL");
        expect(await sent).toMatchObject({ ok: false, code: "NATIVE_CONNECTION_CLOSED" });
        // Core stops a turn nobody follows after unfollowedTurnGraceMs (3 s by default).
        expect(await waitForNoSessionProcesses(sessionId, 15_000)).toEqual([]);
      } finally {
        await killSessionProcesses(sessionId);
        await page.close();
      }
    });

    it("takes the CLI and every command it started down with Core when Core is killed mid-turn", async () => {
      const { page, sessionId } = await openRealAgentSession(environment);
      try {
        server.script(slowToolCall(cli, sessionId));
        // What the page's send answers does not matter here, and the page may close before it does.
        send(page, "Wait for the user").catch(() => undefined);
        await page.waitForFunction(() => (window as any).slowCalls === 1, undefined, { timeout: 60_000 });
        expect((await sessionProcesses(sessionId)).length).toBeGreaterThan(0);
        process.kill(await corePidOf(environment.e2e), "SIGKILL");
        expect(await waitForNoSessionProcesses(sessionId)).toEqual([]);
      } finally {
        await killSessionProcesses(sessionId);
        await page.close();
      }
    });
  });

  describe(`the real ${cli} with an endpoint that refuses connections`, () => {
    let environment: RealAgentEnvironment;
    beforeAll(async () => {
      environment = await setUpRealAgent(cli, {
        refusedEndpoint: true,
        settings: { modelResponseTimeoutSeconds: String(traits.responseTimeoutSeconds) },
      });
    });
    afterAll(async () => {
      await environment?.close();
    });

    it("ends the turn with a code within the bound, naming no endpoint", async () => {
      const { page, sessionId } = await openRealAgentSession(environment, { approve: true });
      const startedAt = Date.now();
      const sent = await send(page, "Hello?");
      expect((Date.now() - startedAt) / 1000).toBeLessThan(traits.responseTimeoutSeconds + 10);
      expect(sent.ok).toBe(false);
      expect(["PROVIDER_TIMEOUT", "PROVIDER_FAILED"]).toContain(sent.code);
      expect(sent.message).not.toMatch(/127\.0\.0\.1|localhost/);
      expect(await waitForNoSessionProcesses(sessionId)).toEqual([]);
      await page.close();
    });
  });
}
