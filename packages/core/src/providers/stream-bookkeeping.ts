import type { ProviderCode } from "@pedelec/protocol/domain";
import type { ProviderEvent } from "./provider-adapter.js";
import type { SetAsideStreamLine } from "./stream-line.js";
import { truncateUtf8 } from "./truncate-utf8.js";
import { noteUnknownLineType } from "./unknown-line-types.js";

const IGNORED_LINE_SAMPLES = 5;
const IGNORED_LINE_SAMPLE_BYTES = 200;

/** The stdout lines a parser could not use, counted for the run's summary (and its diagnostics when it fails). */
export interface StreamLineCounts {
  /** The first line of a known type that lacked fields the adapter relies on, and why. */
  problem: { lineType: string; issues: string } | null;
  invalidLineCount: number;
  /** Lines that were not JSON objects with a string type field (warnings, banners); the first few are kept. */
  ignoredLineCount: number;
  ignoredLineSamples: string[];
  droppedLineCount: number;
}

const isSetAside = (line: { kind: string }): line is SetAsideStreamLine =>
  line.kind === "unknown" || line.kind === "not-json" || line.kind === "invalid";

/** Counts the lines of one run that a provider's parser sets aside: unknown, not JSON, invalid, or too long. */
export class StreamBookkeeping {
  readonly #provider: ProviderCode;
  #problem: StreamLineCounts["problem"] = null;
  #invalidLineCount = 0;
  #ignoredLineCount = 0;
  readonly #ignoredLineSamples: string[] = [];
  #droppedLineCount = 0;
  #unknownLineCount = 0;

  constructor(provider: ProviderCode) {
    this.#provider = provider;
  }

  /**
   * Feeds one stdout line (without its newline): every line, blank or not, is output seen. A line the parser does
   * not read (unknown, not JSON, invalid) is counted here; `read` is then handed each classified line, those too.
   */
  feed<Line extends { kind: string }>(
    text: string,
    classify: (text: string) => Line,
    read: (line: Line, events: ProviderEvent[]) => void,
  ): ProviderEvent[] {
    const events: ProviderEvent[] = [{ type: "output-seen" }];
    if (text.trim() === "") return events;
    const classified = classify(text);
    if (isSetAside(classified)) this.#setAside(classified, text);
    read(classified, events);
    return events;
  }

  #setAside(line: SetAsideStreamLine, text: string): void {
    switch (line.kind) {
      case "unknown":
        noteUnknownLineType(this.#provider, line.lineType);
        this.#unknownLineCount += 1;
        break;
      case "not-json":
        this.#ignoredLineCount += 1;
        if (this.#ignoredLineSamples.length < IGNORED_LINE_SAMPLES) {
          this.#ignoredLineSamples.push(truncateUtf8(text, IGNORED_LINE_SAMPLE_BYTES).text);
        }
        break;
      case "invalid":
        this.#invalidLineCount += 1;
        this.#problem ??= { lineType: line.lineType, issues: line.issues };
        break;
    }
  }

  /** Notes a stdout line that was too long to keep; it still counts as output. */
  lineDropped(): ProviderEvent[] {
    this.#droppedLineCount += 1;
    return [{ type: "output-seen" }];
  }

  /** JSON lines of types the parser does not read. */
  get unknownLineCount(): number {
    return this.#unknownLineCount;
  }

  counts(): StreamLineCounts {
    return {
      problem: this.#problem,
      invalidLineCount: this.#invalidLineCount,
      ignoredLineCount: this.#ignoredLineCount,
      ignoredLineSamples: [...this.#ignoredLineSamples],
      droppedLineCount: this.#droppedLineCount,
    };
  }
}
