import type { ChatEntry, ChatTranscript } from "./chat-transcript.js";
import { createElement } from "./dom.js";

/** Renders the transcript into `container`, one `.message.<role>` element per entry, updated in place. */
export function mountChat(container: HTMLElement, transcript: ChatTranscript): () => void {
  const elements = new Map<string, HTMLElement>();
  const render = (entry: ChatEntry): void => {
    let element = elements.get(entry.key);
    if (element === undefined) {
      element = createElement("div", { className: `message ${entry.role}`, data: { key: entry.key } });
      elements.set(entry.key, element);
      container.append(element);
    }
    element.textContent = entry.text;
    element.classList.toggle("streaming", !entry.complete);
    if (entry.messageId !== undefined) element.dataset.messageId = entry.messageId;
    // Follow the stream only when the reader is already at the bottom.
    const nearBottom = container.scrollHeight - container.scrollTop - container.clientHeight < 80;
    if (nearBottom || entry.role === "user") container.scrollTop = container.scrollHeight;
  };
  for (const entry of transcript.entries) render(entry);
  return transcript.onChange(render);
}
