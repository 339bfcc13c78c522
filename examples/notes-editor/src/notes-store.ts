/** One note of the editor. */
export interface Note {
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

/** What the page starts with (there is no server behind this example). */
export const STARTER_NOTES: readonly Note[] = [
  { id: "groceries", title: "Groceries", text: "Milk\nEggs\nBread" },
  { id: "meeting", title: "Team meeting", text: "Agenda:\n- release date\n- on-call rota\n\nDecisions:\n" },
  { id: "ideas", title: "Ideas", text: "A notes editor your local agent can help with." },
];

/**
 * The notes, as a store React reads with useSyncExternalStore. Tool handlers read it too: after waiting for the user
 * they need the notes as they are now, not as they were when the call came in.
 */
export class NotesStore {
  #notes: readonly Note[];
  readonly #listeners = new Set<() => void>();

  constructor(notes: readonly Note[] = STARTER_NOTES) {
    this.#notes = notes;
  }

  readonly getSnapshot = (): readonly Note[] => this.#notes;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  };

  get(id: string): Note | undefined {
    return this.#notes.find((note) => note.id === id);
  }

  /** Replaces the text of note `id`; false when there is no such note. */
  setText(id: string, text: string): boolean {
    const index = this.#notes.findIndex((note) => note.id === id);
    if (index < 0) return false;
    this.#notes = this.#notes.map((note, position) => (position === index ? { ...note, text } : note));
    for (const listener of [...this.#listeners]) listener();
    return true;
  }
}

/**
 * `text` with the first occurrence of `passage` replaced by `replacement`, or undefined when `passage` is not in it.
 * (String.prototype.replace would read `$&` and the like in the replacement as patterns.)
 */
export function replacePassage(text: string, passage: string, replacement: string): string | undefined {
  const start = passage === "" ? -1 : text.indexOf(passage);
  if (start < 0) return undefined;
  return text.slice(0, start) + replacement + text.slice(start + passage.length);
}
