import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { useCoreUnderTest } from "../../testing/core-home.js";
import { collectSessionEvents } from "../../testing/session-events.js";

const REPO = resolve(fileURLToPath(new URL("../../../../../", import.meta.url)));
const STAND_IN_DIRECTORY = join(REPO, "test/stand-ins/codex");
const ORIGIN = "http://127.0.0.1:4000";
const tools = [
  {
    name: "add_todo",
    description: "Add a card",
    argsSchema: { type: "object" as const, properties: { title: { type: "string" as const } }, required: ["title"] },
    timeoutMs: 5_000,
  },
];

/** Resolves `@pedelec/<package>/<module>` to its TypeScript source, as the unit tests do. */
const pedelecSources: Plugin = {
  name: "pedelec-sources",
  setup(builder) {
    builder.onResolve({ filter: /^@pedelec\/[a-z-]+\/.+$/ }, (args) => {
      const [, packageName, modulePath] = /^@pedelec\/([a-z-]+)\/(.+)$/.exec(args.path) ?? [];
      return { path: join(REPO, "packages", packageName ?? "", "src", `${modulePath ?? ""}.ts`) };
    });
  },
};

let toolDirectory: string;
let pedelecCli: string;

beforeAll(async () => {
  // The agent's real pedelec-cli, built from source: the stand-in runs it through /bin/sh like codex would.
  toolDirectory = await mkdtemp(join(tmpdir(), "pedelec-codex-cli-"));
  pedelecCli = join(toolDirectory, "pedelec-cli.mjs");
  await build({
    entryPoints: [join(REPO, "packages/cli/src/pedelec-cli-entry.ts")],
    outfile: pedelecCli,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
    plugins: [pedelecSources],
    logLevel: "silent",
  });
});
afterAll(async () => {
  await rm(toolDirectory, { recursive: true, force: true });
});

const coreUnderTest = useCoreUnderTest(() => ({
  prefix: "pedelec-codex-core-",
  providerPath: STAND_IN_DIRECTORY,
  stateFolders: { CODEX_HOME: "codex-state" },
  pedelecCliEntry: pedelecCli,
}));

async function waitForFile(file: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await readFile(file, "utf8").catch(() => "");
    if (text !== "") return text;
    if (Date.now() > deadline) throw new Error(`${file} did not appear within ${timeoutMs} ms`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 20));
  }
}

describe("a codex session over the Core socket", () => {
  it("answers, passes a tool call to the page and back, resumes its thread, and cancels a hanging turn", async () => {
    const core = await coreUnderTest.start();
    const page = await CoreConnection.open(core.paths.socketPath);
    const events = collectSessionEvents(page, 15_000);
    const { sessionId, workspace } = await page.request("createSession", { provider: "codex", skills: { guidance: "", tools } }, ORIGIN);

    // A plain answer: codex sends the message whole, Core hands it to the page as a delta and a completion.
    await page.request("sendText", { sessionId, turnId: "turn-1", text: "reply: Hello from codex." }, ORIGIN);
    await events.until("turn-completed", (event) => event.turnId === "turn-1");
    const completed = await events.until("chat-completed", (event) => event.turnId === "turn-1");
    expect(completed.text).toBe("Hello from codex.");
    const deltas = events.seen
      .filter((event) => "turnId" in event && event.turnId === "turn-1")
      .flatMap((event) => (event.type === "chat-delta" && event.messageId === completed.messageId ? [event.delta] : []));
    expect(deltas.join("")).toBe("Hello from codex.");

    // A tool call: the agent runs pedelec-cli in codex's sandbox, the page answers.
    await page.request("sendText", { sessionId, turnId: "turn-2", text: 'call-tool add_todo {"title":"Milk"}' }, ORIGIN);
    const requested = await events.until("tool-call-requested", (event) => event.turnId === "turn-2");
    expect(requested).toMatchObject({ toolName: "add_todo", args: { title: "Milk" } });
    await page.request(
      "submitToolResult",
      { sessionId, toolRequestId: requested.toolRequestId, outcome: { ok: true, result: { id: "c1" } } },
      ORIGIN,
    );
    await events.until("turn-completed", (event) => event.turnId === "turn-2");
    expect((await events.until("chat-completed", (event) => event.turnId === "turn-2")).text).toBe('Tool add_todo returned: {"id":"c1"}');
    // The call went through the session's MCP server (pedelec-cli mcp), as codex's mcp_tool_call.
    const toolStatuses = events.seen
      .filter((event) => "turnId" in event && event.turnId === "turn-2")
      .flatMap((event) => (event.type === "activity-updated" && event.activity.kind === "tool" ? [event.activity.status] : []));
    expect(toolStatuses).toEqual(["started", "completed"]);

    // The next turn continues the same codex thread.
    await page.request("sendText", { sessionId, turnId: "turn-3", text: "report-resume" }, ORIGIN);
    await events.until("turn-completed", (event) => event.turnId === "turn-3");
    const resumed = (await events.until("chat-completed", (event) => event.turnId === "turn-3")).text;
    const [, threadId] = /^resumed=([0-9a-f-]{36})$/.exec(resumed) ?? [];
    expect(threadId).toBeDefined();
    const day = new Date().toISOString().slice(0, 10).split("-");
    const rollouts = await readdir(join(coreUnderTest.home, "codex-state", "sessions", ...day));
    expect(rollouts).toEqual([expect.stringMatching(new RegExp(`-${threadId}\\.jsonl$`))]);

    // Cancelling a hanging turn ends the CLI's whole process group.
    await page.request("sendText", { sessionId, turnId: "turn-4", text: "hang" }, ORIGIN);
    const pid = Number(await waitForFile(join(workspace.path, ".stand-in-hanging")));
    await expect(page.request("cancelTurn", { sessionId }, ORIGIN)).resolves.toEqual({ cancelled: true });
    const failed = await events.until("turn-failed", (event) => event.turnId === "turn-4");
    expect(failed.error.code).toBe("TURN_CANCELLED");
    expect(() => process.kill(-pid, 0)).toThrowError(expect.objectContaining({ code: "ESRCH" }) as Error);
    page.close();
  });
});
