import type { ProviderCode } from "@kaoruisaac/pedelec";
import { usePedelecSession, useTool } from "@kaoruisaac/pedelec/react";
import { useState, useSyncExternalStore, type ReactNode } from "react";
import { ChatPanel, type TurnOutcome } from "./chat-panel.js";
import { EditDialog } from "./edit-dialog.js";
import { createNoteToolHandlers } from "./note-tool-handlers.js";
import { NOTE_TOOLS, NOTES_GUIDANCE } from "./note-tools.js";
import { NotesPane } from "./notes-pane.js";
import { NotesStore, STARTER_NOTES, type Note } from "./notes-store.js";
import { PendingEdits } from "./pending-edits.js";

const PROVIDERS: readonly ProviderCode[] = ["claude", "codex", "opencode", "cursor", "antigravity", "ollama"];

export interface NotesEditorAppProps {
  /** The notes to start with (default: a few examples). */
  initialNotes?: readonly Note[];
}

/**
 * The notes editor. Needs a `PedelecProvider` above it. No session exists until the user presses Connect: the first
 * session of a site opens the extension's approval window.
 */
export function NotesEditorApp({ initialNotes = STARTER_NOTES }: NotesEditorAppProps): ReactNode {
  const [store] = useState(() => new NotesStore(initialNotes));
  const [edits] = useState(() => new PendingEdits());
  const [handlers] = useState(() => createNoteToolHandlers(store, edits));
  const notes = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  const proposals = useSyncExternalStore(edits.subscribe, edits.getSnapshot, edits.getSnapshot);
  const [selectedId, setSelectedId] = useState(initialNotes[0]?.id ?? "");
  const [provider, setProvider] = useState<ProviderCode>("claude");
  const [connected, setConnected] = useState(false);
  const [lastTurn, setLastTurn] = useState<TurnOutcome | null>(null);

  // Disconnecting (or leaving the page) ends the session, which aborts any edit still waiting for the user.
  const { session, status, messages, activity, usage, error, send, cancel } = usePedelecSession({
    provider,
    effortLevel: "medium",
    enabled: connected,
    skills: { guidance: NOTES_GUIDANCE, tools: NOTE_TOOLS },
  });
  useTool(session, "list_notes", () => handlers.listNotes());
  useTool(session, "read_note", (args) => handlers.readNote(args));
  useTool(session, "propose_edit", (args, context) => handlers.proposeEdit(args, context.signal));
  useTool(session, "replace_note_text", (args, context) => handlers.replaceNoteText(args, context.signal));

  const proposal = proposals[0];
  return (
    <div className="app">
      <header className="page-header">
        <h1>Notes</h1>
        <div className="session-bar">
          <label>
            Provider{" "}
            <select id="provider" value={provider} disabled={connected} onChange={(event) => setProvider(event.target.value as ProviderCode)}>
              {PROVIDERS.map((code) => (
                <option key={code} value={code}>
                  {code}
                </option>
              ))}
            </select>
          </label>
          <button id="connect" type="button" onClick={() => setConnected((current) => !current)}>
            {connected ? "Disconnect" : "Connect"}
          </button>
        </div>
      </header>
      <main className="layout">
        {/* The dialog covers the notes only: the chat stays usable, so the user can still cancel the turn. */}
        <div className="notes-area">
          <NotesPane notes={notes} selectedId={selectedId} onSelect={setSelectedId} onEdit={(id, text) => store.setText(id, text)} />
          {proposal !== undefined && (
            <EditDialog
              key={proposal.id}
              proposal={proposal}
              queued={proposals.length - 1}
              onAccept={() => {
                setSelectedId(proposal.noteId);
                edits.decide(proposal.id, "accepted");
              }}
              onReject={() => edits.decide(proposal.id, "rejected")}
            />
          )}
        </div>
        <ChatPanel
          status={status}
          messages={messages}
          activity={activity}
          usage={usage}
          error={error}
          lastTurn={lastTurn}
          onSend={(text) => {
            setLastTurn(null);
            void send(text).then((outcome) => setLastTurn(outcome.ok ? "completed" : outcome.error.code));
          }}
          onCancel={() => void cancel()}
        />
      </main>
    </div>
  );
}
