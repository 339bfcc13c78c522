import type { ReactNode } from "react";
import type { EditProposal } from "./pending-edits.js";

export interface EditDialogProps {
  proposal: EditProposal;
  /** How many more proposals wait behind this one. */
  queued: number;
  onAccept(): void;
  onReject(): void;
}

/** The agent's proposed edit, before and after, until the user accepts or rejects it (or the call is aborted). */
export function EditDialog({ proposal, queued, onAccept, onReject }: EditDialogProps): ReactNode {
  return (
    <div className="dialog-backdrop">
      <div id="edit-dialog" role="dialog" aria-labelledby="edit-dialog-title" data-note-id={proposal.noteId}>
        <h2 id="edit-dialog-title">The agent proposes an edit of “{proposal.noteTitle}”</h2>
        {proposal.reason !== undefined && <p className="reason">{proposal.reason}</p>}
        <div className="comparison">
          <figure>
            <figcaption>Now</figcaption>
            <pre role="document" aria-label="Current text">
              {proposal.before}
            </pre>
          </figure>
          <figure>
            <figcaption>Proposed</figcaption>
            <pre role="document" aria-label="Proposed text">
              {proposal.after}
            </pre>
          </figure>
        </div>
        {queued > 0 && <p className="hint">{queued} more waiting</p>}
        <div className="dialog-actions">
          <button id="reject-edit" type="button" onClick={onReject}>
            Reject
          </button>
          <button id="accept-edit" type="button" onClick={onAccept}>
            Accept
          </button>
        </div>
      </div>
    </div>
  );
}
