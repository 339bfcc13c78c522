import { describe, expect, it } from "vitest";
import { preferredChoice, providerChoices } from "./provider-choices.js";

const providers = [
  { code: "codex", name: "Codex", available: false, error: "found at /usr/bin/codex but not signed in — run `codex login`" },
  { code: "claude", name: "Claude Code", available: true, error: null },
  { code: "ollama", name: "Ollama", available: false, error: null },
  { code: "cursor", name: "Cursor", available: true, error: null },
] as const;

describe("providerChoices", () => {
  it("puts usable providers first and gives every other one its reason", () => {
    expect(providerChoices(providers)).toEqual([
      { value: "claude", label: "Claude Code", available: true, reason: "" },
      { value: "cursor", label: "Cursor", available: true, reason: "" },
      {
        value: "codex",
        label: "Codex (unavailable)",
        available: false,
        reason: "Codex: found at /usr/bin/codex but not signed in — run `codex login`",
      },
      { value: "ollama", label: "Ollama (unavailable)", available: false, reason: "Ollama: unavailable" },
    ]);
  });

  it("keeps the user's pick while it is usable, and otherwise moves to the first usable one", () => {
    const choices = providerChoices(providers);
    expect(preferredChoice(choices, "cursor")).toBe("cursor");
    expect(preferredChoice(choices, "codex")).toBe("claude");
    expect(preferredChoice(providerChoices([providers[0]]), "codex")).toBeUndefined();
  });
});
