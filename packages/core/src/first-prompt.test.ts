import { describe, expect, it } from "vitest";
import { buildFirstPrompt, USER_MESSAGE_MARKER } from "./first-prompt.js";

describe("first prompt", () => {
  const prompt = buildFirstPrompt({
    threadId: "3f2a9c1e-0000-4000-8000-000000000001",
    guidance: "Keep the board tidy.",
    tools: [{ name: "add_todo", description: "Add a card\nto the board" }],
    userText: "Add milk",
  });

  it("carries the guidance, the tool index and the calling instructions", () => {
    expect(prompt).toContain("Keep the board tidy.");
    expect(prompt).toContain("- add_todo: Add a card to the board");
    expect(prompt).toContain("pedelec-cli --thread-id 3f2a9c1e-0000-4000-8000-000000000001 tool-call <tool-name> '<json_args>'");
    expect(prompt).toContain("tool-spec <tool-name>");
    expect(prompt).toContain("pedelec-ts-runtime --thread-id 3f2a9c1e-0000-4000-8000-000000000001 run <workspace-relative-path>");
    expect(prompt).toMatch(/never fall back to\s+node, bun, deno/);
  });

  it("says where the page's uploads are and that files written there reach the page", () => {
    expect(prompt).toContain("Files the user uploads from the page are in `.pedelec-runtime/assets/`");
    expect(prompt).toMatch(/Files you write there \(not symlinks\) are visible to the page/);
  });

  it("ends with the user's message after the marker", () => {
    expect(prompt.endsWith(`${USER_MESSAGE_MARKER}\nAdd milk`)).toBe(true);
  });

  it("omits argument schemas", () => {
    expect(prompt).not.toContain("argsSchema");
    expect(prompt).not.toContain('"properties"');
  });
});

describe("first prompt for an agent with native tools", () => {
  const input = {
    threadId: "3f2a9c1e-0000-4000-8000-000000000001",
    guidance: "Keep the board tidy.",
    tools: [{ name: "add_todo", description: "Add a card" }],
    userText: "Add milk",
  };
  const native = buildFirstPrompt({ ...input, nativeToolName: (name) => `mcp__pedelec__${name}` });

  it("names each page tool and the script runner as the agent's own tools", () => {
    expect(native).toContain("the tool\nmcp__pedelec__<name> for each app tool <name> listed under [Pedelec App Tools]");
    expect(native).toContain("- add_todo: Add a card");
    expect(native).toContain("use only your tool mcp__pedelec__run_script");
    expect(native).toMatch(/never fall back to node, bun, deno/);
  });

  it("no longer explains the shell commands, naming pedelec-cli once as the fallback", () => {
    expect(native).not.toContain("tool-spec");
    expect(native).not.toContain("single quotes");
    expect(native.match(/pedelec-cli/g)).toHaveLength(1);
    expect(native.length).toBeLessThan(buildFirstPrompt(input).length);
  });

  it("sends scripts to the shell command when a page tool takes the name run_script", () => {
    const clash = buildFirstPrompt({
      ...input,
      tools: [{ name: "run_script", description: "The app's" }],
      nativeToolName: (name) => `mcp__pedelec__${name}`,
    });
    expect(clash).toContain("pedelec-ts-runtime --thread-id 3f2a9c1e-0000-4000-8000-000000000001 run -");
  });
});
