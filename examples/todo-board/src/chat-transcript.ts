/** "note" is the page's own line in the chat, e.g. that the session ended. */
export type ChatRole = "user" | "agent" | "note";

/** One message of the chat pane. Agent messages grow while their deltas stream in. */
export interface ChatEntry {
  /** Stable for the entry's lifetime; the view keys its elements by it. */
  readonly key: string;
  readonly role: ChatRole;
  text: string;
  /** False while an agent message is still streaming. */
  complete: boolean;
  /** The provider's message id, when the events named one. */
  messageId: string | undefined;
}

/**
 * Accumulates streamed agent text into messages: deltas append to their message (by message id, or to the
 * open message when no id is given); a completed message replaces the streamed text with the final one.
 * Pure state, so the streaming rules are tested without a DOM.
 */
export class ChatTranscript {
  readonly #entries: ChatEntry[] = [];
  readonly #listeners = new Set<(entry: ChatEntry) => void>();
  #count = 0;

  get entries(): readonly ChatEntry[] {
    return this.#entries;
  }

  /** Called with the entry that was added or changed. */
  onChange(listener: (entry: ChatEntry) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  addUserMessage(text: string): ChatEntry {
    return this.#push({ role: "user", text, complete: true, messageId: undefined });
  }

  addNote(text: string): ChatEntry {
    return this.#push({ role: "note", text, complete: true, messageId: undefined });
  }

  appendDelta(delta: string, messageId?: string): ChatEntry {
    const entry = this.#findAgentEntry(messageId);
    if (entry === undefined || entry.complete) {
      return this.#push({ role: "agent", text: delta, complete: false, messageId });
    }
    entry.text += delta;
    entry.messageId ??= messageId;
    this.#emit(entry);
    return entry;
  }

  /** The final text wins over what the deltas built (a delta may have been missed). */
  completeMessage(text: string, messageId?: string): ChatEntry {
    const entry = this.#findAgentEntry(messageId);
    if (entry === undefined) {
      return this.#push({ role: "agent", text, complete: true, messageId });
    }
    entry.text = text;
    entry.complete = true;
    entry.messageId ??= messageId;
    this.#emit(entry);
    return entry;
  }

  /** Marks a streaming message as done without final text (the turn failed or the session ended). */
  closeOpenMessage(): void {
    this.#closeOpenAgentMessage();
  }

  #findAgentEntry(messageId: string | undefined): ChatEntry | undefined {
    if (messageId !== undefined) {
      const byId = this.#entries.find((entry) => entry.role === "agent" && entry.messageId === messageId);
      if (byId !== undefined) return byId;
    }
    // Without a known id the text belongs to the message that is still streaming, if it has no other id.
    const open = this.#openAgentEntry();
    if (open !== undefined && (open.messageId === undefined || messageId === undefined)) return open;
    return undefined;
  }

  #openAgentEntry(): ChatEntry | undefined {
    const last = this.#entries.at(-1);
    return last !== undefined && last.role === "agent" && !last.complete ? last : undefined;
  }

  #closeOpenAgentMessage(): void {
    const open = this.#openAgentEntry();
    if (open === undefined) return;
    open.complete = true;
    this.#emit(open);
  }

  #push(fields: Omit<ChatEntry, "key">): ChatEntry {
    // A new message means the one that was streaming is over.
    this.#closeOpenAgentMessage();
    this.#count += 1;
    const entry: ChatEntry = { key: `m${this.#count}`, ...fields };
    this.#entries.push(entry);
    this.#emit(entry);
    return entry;
  }

  #emit(entry: ChatEntry): void {
    for (const listener of [...this.#listeners]) listener(entry);
  }
}
