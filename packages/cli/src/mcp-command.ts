import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { locateCore } from "@pedelec/core-client/core-location";
import { ThreadBridge } from "@pedelec/core-client/thread-bridge";
import { createSessionMcpServer } from "./session-mcp-server.js";

export interface McpCommandInput {
  /** The thread and its capability, as the environment named them (checked by the caller). */
  env: NodeJS.ProcessEnv;
  threadId: string;
  capability: string;
  input: Readable;
  output: Writable;
}

/**
 * `pedelec-cli mcp`: the session's MCP server on stdio, for the agent CLI that started it. Runs until the CLI closes
 * its end of stdin (or the transport fails); exits 0 then.
 */
export async function serveSessionMcp(command: McpCommandInput): Promise<number> {
  const bridge = new ThreadBridge(locateCore(command.env).socketPath, command.threadId, command.capability);
  const server = createSessionMcpServer(bridge);
  const transport = new StdioServerTransport(command.input, command.output);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
    command.input.once("end", resolve);
    command.input.once("close", resolve);
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  bridge.close();
  return 0;
}
