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
