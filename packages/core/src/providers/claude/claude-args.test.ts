import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { TEST_TOOL_SERVER } from "../../testing/provider-turns.js";
import { buildClaudeArgs, type ClaudeArgsInput, claudeMcpConfig, claudeToolName } from "./claude-args.js";

const STREAM = ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"];
const MCP = ["--mcp-config", claudeMcpConfig(TEST_TOOL_SERVER)];
const FILE_TOOLS = "Read,Edit,Write,Glob,Grep,TodoWrite";
const SANDBOX = [
  ...STREAM,
  ...MCP,
  "--strict-mcp-config",
  "--tools",
  FILE_TOOLS,
  "--permission-mode",
  "acceptEdits",
  "--allowedTools",
  `${FILE_TOOLS},mcp__pedelec`,
];

const args = (input: Partial<ClaudeArgsInput>) =>
  buildClaudeArgs({ providerSessionId: null, model: null, effortArgv: [], access: "sandbox", toolServer: TEST_TOOL_SERVER, ...input });

describe("buildClaudeArgs", () => {
  it("builds a sandboxed first turn: the file tools and Pedelec's MCP server only, no shell, no permission bypass", () => {
    expect(args({})).toEqual(SANDBOX);
    expect(args({})).not.toContain("--dangerously-skip-permissions");
    expect(args({}).join(" ")).not.toContain("Bash");
  });

  it("registers the session's MCP server by its launcher, naming neither the thread nor its capability", () => {
    expect(JSON.parse(claudeMcpConfig(TEST_TOOL_SERVER))).toEqual({
      mcpServers: { pedelec: { type: "stdio", command: TEST_TOOL_SERVER.command, args: ["mcp"] } },
    });
    expect(claudeToolName("add_todo")).toBe("mcp__pedelec__add_todo");
  });

  it("skips permissions only for a Full Access session, which keeps the user's own MCP servers", () => {
    expect(args({ access: "full" })).toEqual([...STREAM, ...MCP, "--dangerously-skip-permissions"]);
  });

  it("adds resume, then model, then the effort profile", () => {
    expect(args({ providerSessionId: "4fab02ca-67b9-489d-8b89-0b1f0b9550e6", model: "claude-opus-4-1", effortArgv: ["--effort", "high"] })).toEqual([
      ...SANDBOX,
      "--resume",
      "4fab02ca-67b9-489d-8b89-0b1f0b9550e6",
      "--model",
      "claude-opus-4-1",
      "--effort",
      "high",
    ]);
  });

  it("leaves out an empty model", () => {
    expect(args({ model: "", effortArgv: ["--effort", "low"] })).toEqual([...SANDBOX, "--effort", "low"]);
  });

  it("refuses values that the CLI would read as flags", () => {
    expect(() => args({ providerSessionId: "--add-dir=/" })).toThrow(PedelecError);
    expect(() => args({ model: "-x" })).toThrow(/must not be empty or start with "-"/);
    expect(() => args({ providerSessionId: "" })).toThrow(PedelecError);
  });
});
