import type { ToolArgsOf } from "@kaoruisaac/pedelec";
import type { proposeEdit, readNote, replaceNoteText } from "./note-tools.js";
import { replacePassage, type Note, type NotesStore } from "./notes-store.js";
import type { PendingEdits } from "./pending-edits.js";

/** What an edit tool answers the agent. */
export type EditResult =
  | { outcome: "applied"; note: Note }
  | { outcome: "rejected"; message: string }
  | { outcome: "conflict"; message: string; note: Note }
  | { outcome: "unchanged"; message: string };

export interface NoteSummary {
  id: string;
  title: string;
  firstLine: string;
  length: number;
}

/**
 * The tools' work, apart from React: reads answer at once; an edit is shown to the user and the call waits for the
 * decision. Aborting `signal` (turn cancelled, session ended, call timed out) rejects the wait with the signal's reason
 * and closes the dialog; nothing is applied then.
 */
export function createNoteToolHandlers(notes: NotesStore, edits: PendingEdits) {
  const requireNote = (id: string): Note => {
    const note = notes.get(id);
    if (note === undefined) throw new Error(`There is no note "${id}"; list_notes gives the ids`);
    return note;
  };

  const proposeText = async (note: Note, after: string, reason: string | undefined, signal: AbortSignal): Promise<EditResult> => {
    if (after === note.text) return { outcome: "unchanged", message: "The proposed text is the note's text already." };
    const decision = await edits.request({ noteId: note.id, noteTitle: note.title, before: note.text, after, reason }, signal);
    if (decision === "rejected") return { outcome: "rejected", message: "The user rejected the edit; the note is unchanged." };
    // The user may have typed in the note while the proposal waited: never overwrite that.
    const current = requireNote(note.id);
    if (current.text !== note.text) {
      return { outcome: "conflict", message: "The note changed while the edit waited; read it again.", note: current };
    }
    notes.setText(note.id, after);
    return { outcome: "applied", note: requireNote(note.id) };
  };

  return {
    listNotes: (): NoteSummary[] =>
      notes.getSnapshot().map((note) => ({ id: note.id, title: note.title, firstLine: note.text.split("\n", 1)[0] ?? "", length: note.text.length })),

    readNote: (args: ToolArgsOf<typeof readNote>): Note => requireNote(args.id),

    proposeEdit: async (args: ToolArgsOf<typeof proposeEdit>, signal: AbortSignal): Promise<EditResult> =>
      proposeText(requireNote(args.id), args.text, args.reason, signal),

    replaceNoteText: async (args: ToolArgsOf<typeof replaceNoteText>, signal: AbortSignal): Promise<EditResult> => {
      const note = requireNote(args.id);
      const after = replacePassage(note.text, args.find, args.replace);
      if (after === undefined) throw new Error(`The passage is not in note "${args.id}"; read_note gives its text`);
      return proposeText(note, after, args.reason, signal);
    },
  };
}
