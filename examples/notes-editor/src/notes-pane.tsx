import type { ReactNode } from "react";
import type { Note } from "./notes-store.js";

export interface NotesPaneProps {
  notes: readonly Note[];
  selectedId: string;
  onSelect(id: string): void;
  onEdit(id: string, text: string): void;
}

/** The list of notes and an editor for the selected one. */
export function NotesPane({ notes, selectedId, onSelect, onEdit }: NotesPaneProps): ReactNode {
  const selected = notes.find((note) => note.id === selectedId) ?? notes[0];
  return (
    <section className="notes-pane" aria-label="Notes">
      <ul id="notes" className="note-list">
        {notes.map((note) => (
          <li key={note.id}>
            <button
              type="button"
              data-note-id={note.id}
              aria-current={note.id === selected?.id ? "true" : undefined}
              onClick={() => onSelect(note.id)}
            >
              {note.title}
            </button>
          </li>
        ))}
      </ul>
      {selected !== undefined && (
        <label className="editor">
          <span>{selected.title}</span>
          <textarea id="note-text" data-note-id={selected.id} value={selected.text} onChange={(event) => onEdit(selected.id, event.target.value)} />
        </label>
      )}
    </section>
  );
}
