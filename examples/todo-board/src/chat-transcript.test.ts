import { describe, expect, it } from "vitest";
import { ChatTranscript, type ChatEntry } from "./chat-transcript.js";

function snapshot(transcript: ChatTranscript) {
  return transcript.entries.map(({ role, text, complete }) => ({ role, text, complete }));
}

describe("ChatTranscript", () => {
  it("streams deltas into one agent message and finalizes it with the completed text", () => {
    const transcript = new ChatTranscript();
    transcript.addUserMessage("Add milk");
    transcript.appendDelta("Add", "m-1");
    transcript.appendDelta("ed mi", "m-1");
    expect(snapshot(transcript).at(-1)).toEqual({ role: "agent", text: "Added mi", complete: false });
    transcript.completeMessage("Added milk.", "m-1");
    expect(snapshot(transcript)).toEqual([
      { role: "user", text: "Add milk", complete: true },
      { role: "agent", text: "Added milk.", complete: true },
    ]);
  });

  it("keeps separate messages apart by message id", () => {
    const transcript = new ChatTranscript();
    transcript.appendDelta("First", "m-1");
    transcript.completeMessage("First.", "m-1");
    transcript.appendDelta("Second", "m-2");
    transcript.completeMessage("Second.", "m-2");
    expect(snapshot(transcript).map((entry) => entry.text)).toEqual(["First.", "Second."]);
  });

  it("starts a new message when a delta of another id arrives, closing the streaming one", () => {
    const transcript = new ChatTranscript();
    transcript.appendDelta("one", "m-1");
    transcript.appendDelta("two", "m-2");
    expect(snapshot(transcript)).toEqual([
      { role: "agent", text: "one", complete: true },
      { role: "agent", text: "two", complete: false },
    ]);
  });

  it("appends id-less deltas to the open message and completes it", () => {
    const transcript = new ChatTranscript();
    transcript.appendDelta("Hel");
    transcript.appendDelta("lo");
    transcript.completeMessage("Hello!");
    expect(snapshot(transcript)).toEqual([{ role: "agent", text: "Hello!", complete: true }]);
  });

  it("shows a completed message that had no deltas, once even when completed twice", () => {
    const transcript = new ChatTranscript();
    transcript.completeMessage("Whole answer", "m-1");
    transcript.completeMessage("Whole answer", "m-1");
    expect(snapshot(transcript)).toEqual([{ role: "agent", text: "Whole answer", complete: true }]);
  });

  it("closes a message the turn left streaming, and notes stay apart", () => {
    const transcript = new ChatTranscript();
    transcript.appendDelta("partial", "m-1");
    transcript.closeOpenMessage();
    transcript.addNote("The session ended.");
    expect(snapshot(transcript)).toEqual([
      { role: "agent", text: "partial", complete: true },
      { role: "note", text: "The session ended.", complete: true },
    ]);
  });

  it("tells listeners which entry changed, with stable keys", () => {
    const transcript = new ChatTranscript();
    const changes: Array<Pick<ChatEntry, "key" | "text">> = [];
    const unsubscribe = transcript.onChange((entry) => changes.push({ key: entry.key, text: entry.text }));
    transcript.addUserMessage("hi");
    transcript.appendDelta("a", "m-1");
    transcript.appendDelta("b", "m-1");
    unsubscribe();
    transcript.appendDelta("c", "m-1");
    expect(changes).toEqual([
      { key: "m1", text: "hi" },
      { key: "m2", text: "a" },
      { key: "m2", text: "ab" },
    ]);
  });
});
