import { describe, expect, it } from "vitest";
import { textWithCommands } from "./remedy-text.js";

describe("textWithCommands", () => {
  it("turns backticked parts into commands", () => {
    expect(textWithCommands("Run `codex login` in a terminal, then send your message again.")).toEqual([
      { text: "Run ", command: false },
      { text: "codex login", command: true },
      { text: " in a terminal, then send your message again.", command: false },
    ]);
  });

  it("keeps text without commands whole, and drops empty pieces", () => {
    expect(textWithCommands("Start a new one.")).toEqual([{ text: "Start a new one.", command: false }]);
    expect(textWithCommands("`npx pedelec doctor`")).toEqual([{ text: "npx pedelec doctor", command: true }]);
    expect(textWithCommands("")).toEqual([]);
  });
});
