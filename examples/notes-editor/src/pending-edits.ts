/** An edit the agent proposed, as the confirm dialog shows it. */
export interface EditProposal {
  readonly id: string;
  readonly noteId: string;
  readonly noteTitle: string;
  readonly before: string;
  readonly after: string;
  /** Why, in the agent's words. */
  readonly reason: string | undefined;
}

export type EditDecision = "accepted" | "rejected";

interface Waiting {
  readonly proposal: EditProposal;
  readonly decide: (decision: EditDecision) => void;
}

/**
 * The proposed edits that wait for the user, oldest first (the dialog shows the first). A proposal's promise settles
 * with the user's decision, or rejects with the call's abort reason as soon as its signal fires (the turn was
 * cancelled, the session ended, the call timed out), taking the proposal off the screen.
 */
export class PendingEdits {
  #waiting: readonly Waiting[] = [];
  #proposals: readonly EditProposal[] = [];
  readonly #listeners = new Set<() => void>();
  #nextId = 1;

  readonly getSnapshot = (): readonly EditProposal[] => this.#proposals;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  };

  request(proposal: Omit<EditProposal, "id">, signal: AbortSignal): Promise<EditDecision> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const id = `edit-${this.#nextId++}`;
      const onAbort = (): void => {
        this.#remove(id);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      const decide = (decision: EditDecision): void => {
        signal.removeEventListener("abort", onAbort);
        this.#remove(id);
        resolve(decision);
      };
      this.#set([...this.#waiting, { proposal: { ...proposal, id }, decide }]);
    });
  }

  /** The user's answer to proposal `id`; false when it no longer waits. */
  decide(id: string, decision: EditDecision): boolean {
    const waiting = this.#waiting.find((entry) => entry.proposal.id === id);
    if (waiting === undefined) return false;
    waiting.decide(decision);
    return true;
  }

  #remove(id: string): void {
    this.#set(this.#waiting.filter((entry) => entry.proposal.id !== id));
  }

  #set(waiting: readonly Waiting[]): void {
    this.#waiting = waiting;
    this.#proposals = waiting.map((entry) => entry.proposal);
    for (const listener of [...this.#listeners]) listener();
  }
}
