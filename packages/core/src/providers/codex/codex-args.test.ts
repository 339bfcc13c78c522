import { describe, expect, it } from "vitest";
import { validateEffortArgv } from "../../effort-profile.js";
import { TEST_TOOL_SERVER } from "../../testing/provider-turns.js";
import { buildCodexArgs, CODEX_OWNED_FLAGS, codexMcpFlags, codexToolName, isCodexEffortKnob } from "./codex-args.js";

const WORKSPACE = "/home/ada/.pedelec/workspaces/thread-7f3a91c2";
const HEAD = ["exec", "--json", "--skip-git-repo-check", "--cd", WORKSPACE];
/** Plain shells for the model's commands: a login shell's profile may reset PATH and lose pedelec-cli. */
const SHELL = ["-c", "allow_login_shell=false"];
const MCP = codexMcpFlags(TEST_TOOL_SERVER);
const SANDBOX = [
  "--sandbox",
  "workspace-write",
  "-c",
  "sandbox_workspace_write.network_access=true",
  "-c",
  "features.shell_tool=false",
  ...SHELL,
  ...MCP,
];
const input = {
  workspacePath: WORKSPACE,
  providerSessionId: null,
  model: null,
  effortArgv: [],
  access: "sandbox" as const,
  toolServer: TEST_TOOL_SERVER,
  serversOff: [],
};

describe("buildCodexArgs", () => {
  it("builds a sandboxed first turn: workspace-write, no shell tool, the session's MCP server, no bypass, prompt from stdin", () => {
    const args = buildCodexArgs(input);
    expect(args).toEqual([...HEAD, ...SANDBOX, "-"]);
    expect(args).not.toContain("--dangerously-bypass-approvals-and-sandbox");
  });

  it("bypasses the sandbox only for a Full Access session", () => {
    expect(buildCodexArgs({ ...input, access: "full" })).toEqual([...HEAD, "--dangerously-bypass-approvals-and-sandbox", ...SHELL, ...MCP, "-"]);
  });

  it("switches the user's own MCP servers off before registering the session's, in one override codex merges", () => {
    const args = buildCodexArgs({ ...input, serversOff: ["github", "dotted.name", 'quote"d'] });
    expect(args).toEqual([
      ...HEAD,
      ...SANDBOX.slice(0, -MCP.length),
      "-c",
      'mcp_servers={"github"={enabled=false},"dotted.name"={enabled=false},"quote\\"d"={enabled=false}}',
      ...MCP,
      "-",
    ]);
  });

  it("registers the session's MCP server with its launcher, the names of the variables it needs, and its tools approved", () => {
    expect(MCP).toEqual([
      "-c",
      `mcp_servers.pedelec.command="${TEST_TOOL_SERVER.command}"`,
      "-c",
      'mcp_servers.pedelec.args=["mcp"]',
      "-c",
      'mcp_servers.pedelec.env_vars=["PEDELEC_HOME","PEDELEC_THREAD_ID","PEDELEC_THREAD_CAPABILITY"]',
      "-c",
      'mcp_servers.pedelec.default_tools_approval_mode="approve"',
      "-c",
      "mcp_servers.pedelec.required=true",
    ]);
    expect(codexToolName("add_todo")).toBe("add_todo (in the tool namespace mcp__pedelec)");
  });

  it("puts model and effort before the resume subcommand, and the stdin marker last", () => {
    expect(
      buildCodexArgs({
        ...input,
        providerSessionId: "0199a213-81c0-7800-8aa1-bbab2a035a53",
        model: "gpt-5-codex",
        effortArgv: ["-c", "model_reasoning_effort=high"],
      }),
    ).toEqual([...HEAD, ...SANDBOX, "-m", "gpt-5-codex", "-c", "model_reasoning_effort=high", "resume", "0199a213-81c0-7800-8aa1-bbab2a035a53", "-"]);
  });

  it.each([[{ model: "--yolo" }], [{ providerSessionId: "--last" }], [{ providerSessionId: "" }], [{ workspacePath: "-C/" }]])(
    "refuses a value that would read as a flag: %j",
    (override) => {
      expect(() => buildCodexArgs({ ...input, ...override })).toThrowError(expect.objectContaining({ code: "INVALID_INPUT" }) as Error);
    },
  );
});

describe("codex effort profiles", () => {
  const rules = { ownedFlags: CODEX_OWNED_FLAGS, isEffortKnob: isCodexEffortKnob };

  it.each([
    [["-c", "model_reasoning_effort=low"]],
    [["--config", "model_reasoning_effort=xhigh"]],
    [["--config=model_reasoning_effort=medium"]],
    [["-cmodel_reasoning_effort=high"]],
    [["-c", 'model_reasoning_effort="minimal"']],
  ])("accepts the reasoning-effort knob %j", (argv) => {
    expect(validateEffortArgv(argv, "codex/high", rules)).toEqual(argv);
  });

  it.each([
    [["-c", "sandbox_mode=danger-full-access"]],
    [["-c", "approval_policy=never"]],
    [["-c", 'sandbox_workspace_write.writable_roots=["/"]']],
    [["-csandbox_mode=danger-full-access"]],
    [["--config=approval_policy=never"]],
    [["-c", "model_reasoning_effort=turbo"]],
    [["-c"]],
    [["-sdanger-full-access"]],
    [["--sandbox", "danger-full-access"]],
    [["--yolo"]],
    [["-m", "gpt-5"]],
    [["--cd", "/"]],
    [["--add-dir", "/etc"]],
    [["-p", "unsafe-profile"]],
  ])("refuses %j", (argv) => {
    expect(() => validateEffortArgv(argv, "codex/high", rules)).toThrowError(expect.objectContaining({ code: "EFFORT_PROFILE_INVALID" }) as Error);
  });
});
