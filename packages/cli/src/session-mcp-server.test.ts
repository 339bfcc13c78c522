import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, describe, expect, it } from "vitest";
import type { PageTool, ScriptRunReport } from "@pedelec/core-client/thread-bridge";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { RUN_SCRIPT_TOOL, type SessionToolAccess, createSessionMcpServer } from "./session-mcp-server.js";

const ADD_TODO: PageTool = {
  name: "add_todo",
  description: "Adds a todo",
  argsSchema: { type: "object", properties: { title: { type: "string", minLength: 1 } }, required: ["title"], additionalProperties: false },
  timeoutMs: 10_000,
};

const EXITED: ScriptRunReport = {
  exitCode: 0,
  termination: "exited",
  timedOut: false,
  durationMs: 12,
  stdout: "hello\n",
  stderr: "",
  stdoutTruncated: false,
  stderrTruncated: false,
};

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers) await close();
  closers = [];
});

/** A client connected to a server over the given session, through the SDK's linked in-memory pair. */
async function connect(access: Partial<SessionToolAccess>): Promise<Client> {
  const full: SessionToolAccess = {
    listTools: async () => [ADD_TODO],
    callTool: async () => {
      throw new Error("callTool not expected");
    },
    runScript: async () => {
      throw new Error("runScript not expected");
    },
    ...access,
  };
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createSessionMcpServer(full);
  const client = new Client({ name: "test-client", version: "1" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

describe("the session's MCP server", () => {
  it("lists the page's tools with their argument schemas, and the script runner", async () => {
    const client = await connect({});
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["add_todo", RUN_SCRIPT_TOOL]);
    expect(tools[0]).toMatchObject({ description: "Adds a todo", inputSchema: { type: "object", required: ["title"] } });
    expect(tools[1]?.inputSchema).toMatchObject({ type: "object", properties: { source: { type: "string" } } });
  });

  it("calls a page tool with the arguments as given and answers its result as JSON text and structured content", async () => {
    const calls: [string, unknown][] = [];
    const client = await connect({
      callTool: async (name, args) => {
        calls.push([name, args]);
        return { added: args };
      },
    });
    const answer = await client.callTool({ name: "add_todo", arguments: { title: "milk" } });
    expect(calls).toEqual([["add_todo", { title: "milk" }]]);
    expect(answer).toMatchObject({
      content: [{ type: "text", text: JSON.stringify({ added: { title: "milk" } }) }],
      structuredContent: { added: { title: "milk" } },
    });
    expect(answer.isError).toBeUndefined();
  });

  it("wraps a result that is not an object for structured content, and keeps it as it is in the text", async () => {
    const client = await connect({ callTool: async () => [1, 2] });
    const answer = await client.callTool({ name: "add_todo", arguments: { title: "x" } });
    expect(answer).toMatchObject({ content: [{ type: "text", text: "[1,2]" }], structuredContent: { result: [1, 2] } });
  });

  it("answers a Pedelec error as an isError result with its code, message, remedy and details", async () => {
    const client = await connect({
      callTool: async () => {
        throw new PedelecError("TOOL_ARGS_INVALID", "title: too short", { issues: [{ path: ["title"] }] });
      },
    });
    const answer = await client.callTool({ name: "add_todo", arguments: { title: "" } });
    expect(answer.isError).toBe(true);
    const [content] = answer.content as { type: string; text: string }[];
    const body = JSON.parse(content?.text ?? "{}");
    expect(body.error).toMatchObject({ code: "TOOL_ARGS_INVALID", message: "title: too short", details: { issues: [{ path: ["title"] }] } });
    expect(body.error.remedy).toEqual(expect.any(String));
    expect(body.error.remedy.length).toBeGreaterThan(0);
  });

  it("turns anything else thrown into SESSION_ERROR, still as a result the agent reads", async () => {
    const client = await connect({
      callTool: async () => {
        throw new Error("socket gone");
      },
    });
    const answer = await client.callTool({ name: "add_todo", arguments: {} });
    expect(answer.isError).toBe(true);
    expect(JSON.parse((answer.content as { text: string }[])[0]?.text ?? "{}").error).toMatchObject({ code: "SESSION_ERROR" });
  });

  it("stops waiting for Core when the client cancels the call", async () => {
    let seen: AbortSignal | undefined;
    const client = await connect({
      callTool: (_name, _args, signal) =>
        new Promise((_resolve, reject) => {
          seen = signal;
          signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
        }),
    });
    const controller = new AbortController();
    const call = client.callTool({ name: "add_todo", arguments: { title: "slow" } }, undefined, { signal: controller.signal });
    await expect.poll(() => seen !== undefined, { timeout: 5_000 }).toBe(true);
    controller.abort(new Error("user cancelled"));
    await expect(call).rejects.toThrow("user cancelled");
    await expect.poll(() => seen?.aborted, { timeout: 5_000 }).toBe(true);
  });

  it("runs a script through the session's runner and answers the exit code and output", async () => {
    const specs: unknown[] = [];
    const client = await connect({
      runScript: async (spec) => {
        specs.push(spec);
        return EXITED;
      },
    });
    const answer = await client.callTool({ name: RUN_SCRIPT_TOOL, arguments: { source: "console.log('hello')", args: ["a"] } });
    expect(specs).toEqual([{ source: "console.log('hello')", args: ["a"] }]);
    expect(answer.isError).toBeUndefined();
    expect(answer.structuredContent).toMatchObject({ exitCode: 0, stdout: "hello\n" });
  });

  it("marks a script that failed, timed out or was stopped as an error result, with its report", async () => {
    const client = await connect({ runScript: async () => ({ ...EXITED, exitCode: 3, stderr: "boom\n" }) });
    const failed = await client.callTool({ name: RUN_SCRIPT_TOOL, arguments: { entry: "main.ts" } });
    expect(failed).toMatchObject({ isError: true, structuredContent: { exitCode: 3, stderr: "boom\n" } });
  });

  it.each([
    ["neither source nor entry", {}],
    ["both source and entry", { source: "1", entry: "a.ts" }],
    ["an unknown field", { source: "1", shell: "rm -rf /" }],
    ["a time limit past the largest", { source: "1", timeoutMs: 10 ** 9 }],
  ])("refuses run_script arguments with %s as DENO_ENTRY_INVALID, without running anything", async (_, args) => {
    let ran = false;
    const client = await connect({
      runScript: async () => {
        ran = true;
        return EXITED;
      },
    });
    const answer = await client.callTool({ name: RUN_SCRIPT_TOOL, arguments: args });
    expect(answer.isError).toBe(true);
    expect(JSON.parse((answer.content as { text: string }[])[0]?.text ?? "{}").error).toMatchObject({ code: "DENO_ENTRY_INVALID" });
    expect(ran).toBe(false);
  });

  it("leaves the name run_script to a page tool that has it", async () => {
    const pageRunScript = { ...ADD_TODO, name: RUN_SCRIPT_TOOL, description: "The app's own" };
    const calls: string[] = [];
    const client = await connect({
      listTools: async () => [pageRunScript],
      callTool: async (name) => {
        calls.push(name);
        return { ok: true };
      },
    });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool.name, tool.description])).toEqual([[RUN_SCRIPT_TOOL, "The app's own"]]);
    await client.callTool({ name: RUN_SCRIPT_TOOL, arguments: { title: "x" } });
    expect(calls).toEqual([RUN_SCRIPT_TOOL]);
  });
});
