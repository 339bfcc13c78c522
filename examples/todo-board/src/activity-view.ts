import type { Activity } from "@kaoruisaac/pedelec";
import { createElement } from "./dom.js";

const MAX_DETAIL_LENGTH = 2_000;

/**
 * The agent's activity list. An activity keeps one `.activity` line that changes as it goes from started to
 * completed or failed (or stopped, when its turn was cut off); the page's own tool calls get `.tool-call` lines in the
 * same list.
 */
export class ActivityLog {
  readonly #container: HTMLElement;
  readonly #lines = new Map<string, { line: HTMLElement; activity: Activity }>();

  constructor(container: HTMLElement) {
    this.#container = container;
  }

  /** `key` must be unique across turns (activity ids are only unique within a turn). */
  show(key: string, activity: Activity): void {
    let line = this.#lines.get(key)?.line;
    if (line === undefined) {
      line = createElement("li", { className: "activity" });
      this.#container.append(line);
    }
    this.#lines.set(key, { line, activity });
    this.#render(line, activity.kind, activity.status, activity.title);
    if (activity.detail !== undefined) line.title = activity.detail.slice(0, MAX_DETAIL_LENGTH);
    this.#scroll();
  }

  /** Shows every activity still under way as stopped (`data-status="stopped"`): no update will finish it now. */
  stopOpen(): void {
    for (const { line, activity } of this.#lines.values()) {
      if (activity.status === "started" && line.dataset.status === "started") this.#render(line, activity.kind, "stopped", activity.title);
    }
  }

  toolCall(text: string, ok: boolean): void {
    this.#container.append(createElement("li", { className: ok ? "tool-call" : "tool-call failed", text }));
    this.#scroll();
  }

  #render(line: HTMLElement, kind: string, status: string, title: string): void {
    line.dataset.kind = kind;
    line.dataset.status = status;
    line.textContent = `${kind} ${status}: ${title}`;
  }

  #scroll(): void {
    this.#container.scrollTop = this.#container.scrollHeight;
  }
}
