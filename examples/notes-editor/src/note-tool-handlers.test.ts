import { describe, expect, it } from "vitest";
import { createNoteToolHandlers } from "./note-tool-handlers.js";
import { NotesStore, replacePassage } from "./notes-store.js";
import { PendingEdits } from "./pending-edits.js";

function setUp() {
  const notes = new NotesStore([{ id: "list", title: "List", text: "Milk\nEggs" }]);
  const edits = new PendingEdits();
  return { notes, edits, handlers: createNoteToolHandlers(notes, edits) };
}

describe("the note tools' handlers", () => {
  it("answer an aborted edit with the abort itself and leave the note alone", async () => {
    const { notes, edits, handlers } = setUp();
    const controller = new AbortController();
    const answer = handlers.proposeEdit({ id: "list", text: "Tea" }, controller.signal);
    await Promise.resolve();
    expect(edits.getSnapshot()).toHaveLength(1);
    const reason = new Error("The turn was cancelled");
    controller.abort(reason);
    await expect(answer).rejects.toBe(reason);
    expect(edits.getSnapshot()).toEqual([]);
    expect(notes.get("list")?.text).toBe("Milk\nEggs");
  });

  it("do not overwrite what the user typed while the edit waited", async () => {
    const { notes, edits, handlers } = setUp();
    const answer = handlers.replaceNoteText({ id: "list", find: "Eggs", replace: "Butter" }, new AbortController().signal);
    await Promise.resolve();
    const [shown] = edits.getSnapshot();
    expect(shown?.after).toBe("Milk\nButter");
    notes.setText("list", "Milk\nEggs\nJam");
    edits.decide(shown!.id, "accepted");
    await expect(answer).resolves.toMatchObject({ outcome: "conflict", note: { text: "Milk\nEggs\nJam" } });
    expect(notes.get("list")?.text).toBe("Milk\nEggs\nJam");
  });

  it("fail a call about a note or passage that is not there, without asking the user", async () => {
    const { edits, handlers } = setUp();
    await expect(handlers.proposeEdit({ id: "nope", text: "x" }, new AbortController().signal)).rejects.toThrow('There is no note "nope"');
    await expect(handlers.replaceNoteText({ id: "list", find: "Bread", replace: "Rolls" }, new AbortController().signal)).rejects.toThrow(
      "The passage is not in note",
    );
    expect(edits.getSnapshot()).toEqual([]);
  });
});

describe("replacePassage", () => {
  it("replaces the first occurrence literally", () => {
    expect(replacePassage("a b a", "a", "$&$&")).toBe("$&$& b a");
    expect(replacePassage("a b", "c", "d")).toBeUndefined();
    expect(replacePassage("a b", "", "d")).toBeUndefined();
  });
});
