import type { Activity } from "@kaoruisaac/pedelec";
import { createElement } from "./dom.js";

const MAX_DETAIL_LENGTH = 2_000;

/**
 * The agent's activity list. An activity keeps one `.activity` line that changes as it goes from started to
 * completed or failed; the page's own tool calls get `.tool-call` lines in the same list.
 */
export class ActivityLog {
  readonly #container: HTMLElement;
  readonly #lines = new Map<string, HTMLElement>();

  constructor(container: HTMLElement) {
    this.#container = container;
  }

  /** `key` must be unique across turns (activity ids are only unique within a turn). */
  show(key: string, activity: Activity): void {
    let line = this.#lines.get(key);
    if (line === undefined) {
      line = createElement("li", { className: "activity" });
      this.#lines.set(key, line);
      this.#container.append(line);
    }
    line.dataset["kind"] = activity.kind;
    line.dataset["status"] = activity.status;
    line.textContent = `${activity.kind} ${activity.status}: ${activity.title}`;
    if (activity.detail !== undefined) line.title = activity.detail.slice(0, MAX_DETAIL_LENGTH);
    this.#scroll();
  }

  toolCall(text: string, ok: boolean): void {
    this.#container.append(createElement("li", { className: ok ? "tool-call" : "tool-call failed", text }));
    this.#scroll();
  }

  #scroll(): void {
    this.#container.scrollTop = this.#container.scrollHeight;
  }
}
