import { defineTool } from "@kaoruisaac/pedelec";
import { z } from "zod";

/** The user decides each edit in the page, so an edit call waits for a person: give it far longer than the default minute. */
const EDIT_TIMEOUT_MS = 10 * 60_000;
const MAX_NOTE_LENGTH = 20_000;

const noteId = z.string().min(1).max(100).describe("A note's id, as list_notes gives it");

export const listNotes = defineTool({
  name: "list_notes",
  description: "List the notes in the editor: id, title and the first line of each.",
  args: z.object({}),
});

export const readNote = defineTool({
  name: "read_note",
  description: "Read one note's full text.",
  args: z.object({ id: noteId }),
});

export const proposeEdit = defineTool({
  name: "propose_edit",
  description:
    "Propose a new full text for a note. The user sees the change and accepts or rejects it; the result says which " +
    "(outcome applied, rejected or conflict when the note changed meanwhile).",
  args: z.object({
    id: noteId,
    text: z.string().max(MAX_NOTE_LENGTH).describe("The note's whole new text"),
    reason: z.string().max(500).optional().describe("One sentence the user reads: why this edit"),
  }),
  timeoutMs: EDIT_TIMEOUT_MS,
});

export const replaceNoteText = defineTool({
  name: "replace_note_text",
  description: "Propose replacing the first occurrence of a passage in a note; the user accepts or rejects it, like propose_edit.",
  args: z
    .object({
      id: noteId,
      find: z.string().min(1).max(MAX_NOTE_LENGTH).describe("The exact passage to replace"),
      replace: z.string().max(MAX_NOTE_LENGTH).describe("What replaces it"),
      reason: z.string().max(500).optional(),
    })
    // Checked in the page only (JSON Schema cannot say it): a replacement that changes nothing is a mistake.
    .refine((args) => args.find !== args.replace, { message: "find and replace are the same text", path: ["replace"] }),
  timeoutMs: EDIT_TIMEOUT_MS,
});

/** Every tool of the editor, for createSession's skills. */
export const NOTE_TOOLS = [listNotes, readNote, proposeEdit, replaceNoteText] as const;

export const NOTES_GUIDANCE =
  "The page is a notes editor. Read notes with list_notes and read_note. Change a note only through propose_edit or " +
  "replace_note_text: the user confirms every edit in the page, and the result tells you whether it was applied. " +
  "After a rejection, ask the user what they would prefer instead of proposing the same edit again.";
