import type { Activity } from "@pedelec/protocol/session-events";
import type { ProviderEvent } from "./provider-adapter.js";
import { scrubActivity } from "./provider-text-scrubber.js";
import { truncateUtf8 } from "./truncate-utf8.js";

const RETRY_TEXT_MAX_BYTES = 1024;

/**
 * A CLI retrying a failed request to its model's service, shown to the page while it happens: one activity per series
 * of retries (kind "other"), "started" and re-sent with a new title on every attempt, "completed" once the stream goes
 * on, "failed" when the turn ends before that. Its events are notices (ProviderEvent `notice`): retrying is not the
 * model's progress. Titles and details are scrubbed of endpoints and keys. One per parser, so per run.
 */
export class RetryNotice {
  readonly #idPrefix: string;
  #seriesCount = 0;
  #open: Activity | null = null;

  /** `idPrefix` makes the activity ids unique per run (`<prefix>-retry-1`, `-retry-2`, …). */
  constructor(idPrefix: string) {
    this.#idPrefix = idPrefix;
  }

  /** True while a series is open: the CLI said it retries and nothing has come since. */
  get retrying(): boolean {
    return this.#open !== null;
  }

  /** Another attempt failed and the CLI retries: opens a series, or updates the open one. */
  attempt(title: string, detail: string | undefined, events: ProviderEvent[]): void {
    if (this.#open === null) this.#seriesCount += 1;
    const activity: Activity = {
      id: `${this.#idPrefix}-retry-${this.#seriesCount}`,
      kind: "other",
      status: "started",
      title: truncateUtf8(title, RETRY_TEXT_MAX_BYTES).text,
    };
    if (detail !== undefined) activity.detail = truncateUtf8(detail, RETRY_TEXT_MAX_BYTES).text;
    this.#open = scrubActivity(activity);
    events.push({ type: "activity", activity: this.#open, notice: true });
  }

  /** Ends the open series, if any: "completed" when the stream went on, "failed" when the turn ended first. */
  end(status: "completed" | "failed", events: ProviderEvent[]): void {
    if (this.#open === null) return;
    const ended: Activity = { ...this.#open, status };
    this.#open = null;
    events.push({ type: "activity", activity: ended, notice: true });
  }
}
