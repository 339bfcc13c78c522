#!/usr/bin/env node
/*
 * A stand-in for `pedelec-cli mcp` (the session's MCP server), for adapter tests that run a stand-in CLI without a
 * Core: it answers on stdio as the real server does, from a fixed table, the way the fake pedelec-cli of
 * packages/core/src/testing/provider-stand-in-root.ts answers `tool-call`. Each call is recorded in
 * $PEDELEC_TEST_ARGV_FILE as three lines: `mcp-call`, the tool's name, its arguments as JSON.
 *
 *   add_card        answers {"id":"card-4","title":"Buy milk"}
 *   broken          answers an isError result {"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}
 *   anything else   answers {"echo": <the arguments>}
 */
import { writeFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TOOLS = [
  { name: "add_card", description: "Add a card", inputSchema: { type: "object", properties: { title: { type: "string" } } } },
  { name: "add_card_spec", description: "A tool with a spec", inputSchema: { type: "object" } },
  { name: "broken", description: "A tool whose handler throws", inputSchema: { type: "object" } },
];

const server = new Server({ name: "pedelec", version: "0.0.0-stand-in" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name } = request.params;
  const args = request.params.arguments ?? {};
  if (process.env.PEDELEC_TEST_ARGV_FILE) writeFileSync(process.env.PEDELEC_TEST_ARGV_FILE, `mcp-call\n${name}\n${JSON.stringify(args)}\n`);
  if (name === "broken") {
    return { isError: true, content: [{ type: "text", text: '{"error":{"code":"TOOL_HANDLER_ERROR","message":"handler threw"}}' }] };
  }
  const result = name === "add_card" ? { id: "card-4", title: "Buy milk" } : { echo: args };
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
});
await server.connect(new StdioServerTransport());
