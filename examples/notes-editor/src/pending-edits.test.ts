import { describe, expect, it } from "vitest";
import { PendingEdits, type EditProposal } from "./pending-edits.js";

const proposal: Omit<EditProposal, "id"> = { noteId: "n1", noteTitle: "Note", before: "old", after: "new", reason: undefined };

describe("PendingEdits", () => {
  it("shows proposals oldest first and settles each with the user's decision", async () => {
    const edits = new PendingEdits();
    const first = edits.request(proposal, new AbortController().signal);
    const second = edits.request({ ...proposal, after: "newer" }, new AbortController().signal);
    const [shownFirst, shownSecond] = edits.getSnapshot();
    expect([shownFirst?.after, shownSecond?.after]).toEqual(["new", "newer"]);

    expect(edits.decide(shownFirst!.id, "rejected")).toBe(true);
    await expect(first).resolves.toBe("rejected");
    expect(edits.getSnapshot().map((shown) => shown.id)).toEqual([shownSecond!.id]);
    expect(edits.decide(shownFirst!.id, "accepted")).toBe(false);

    edits.decide(shownSecond!.id, "accepted");
    await expect(second).resolves.toBe("accepted");
    expect(edits.getSnapshot()).toEqual([]);
  });

  it("takes a proposal off the screen and rejects with the signal's reason when the call is aborted", async () => {
    const edits = new PendingEdits();
    let notified = 0;
    edits.subscribe(() => (notified += 1));
    const controller = new AbortController();
    const waiting = edits.request(proposal, controller.signal);
    const [shown] = edits.getSnapshot();
    const reason = new Error("turn cancelled");
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(edits.getSnapshot()).toEqual([]);
    expect(notified).toBe(2);
    // A click that arrives after the abort changes nothing.
    expect(edits.decide(shown!.id, "accepted")).toBe(false);
  });

  it("never shows a proposal whose call was aborted before it came", async () => {
    const edits = new PendingEdits();
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    await expect(edits.request(proposal, controller.signal)).rejects.toThrow("gone");
    expect(edits.getSnapshot()).toEqual([]);
  });
});
