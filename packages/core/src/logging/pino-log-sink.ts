import pino from "pino";
import type { LogRecord, LogSink } from "./log-record.js";
import { REDACTED_PATHS, REDACTION_CENSOR } from "./log-redaction.js";

/** Where pino writes each finished JSON line (synchronously; see RotatingLogFile). */
export interface LogLineDestination {
  write(line: string): void;
}

/**
 * The file logger: pino writing JSON lines with the keys Pedelec's log readers know (`time` as an ISO string, `level`
 * as a word, `message`), redacting REDACTED_PATHS unless debug is on, to a synchronous in-process destination (no
 * worker thread: a line is on disk when the call returns, so a crash right after loses nothing). This module is the
 * only one that loads pino, and processes load it after their start (see process-log.ts).
 */
export class PinoLogSink implements LogSink {
  readonly #destination: LogLineDestination;
  #logger: pino.Logger;
  #debug: boolean;
  /** The time of the record being written: a kept early record keeps the time it was logged at. */
  #recordTime = "";

  constructor(destination: LogLineDestination, options: { debug: boolean }) {
    this.#destination = destination;
    this.#debug = options.debug;
    this.#logger = this.#create();
  }

  get debug(): boolean {
    return this.#debug;
  }

  write(record: LogRecord): void {
    this.#recordTime = record.time;
    try {
      this.#logger[record.level](record.fields, record.message);
    } catch {
      // A log line must never take its caller down.
    }
  }

  /** Debug on: `debug` lines are written and nothing is redacted. Applies to the lines that follow. */
  setDebug(debug: boolean): void {
    if (debug === this.#debug) return;
    this.#debug = debug;
    this.#logger = this.#create();
  }

  #create(): pino.Logger {
    return pino(
      {
        level: this.#debug ? "debug" : "info",
        messageKey: "message",
        base: { pid: process.pid },
        timestamp: () => `,"time":"${this.#recordTime}"`,
        formatters: { level: (label) => ({ level: label }) },
        ...(this.#debug ? {} : { redact: { paths: [...REDACTED_PATHS], censor: REDACTION_CENSOR } }),
      },
      this.#destination,
    );
  }
}
