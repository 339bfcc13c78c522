import type { LogRecord, LogSink } from "./log-record.js";

/** Records kept before the file logger exists; Core logs a handful in that time, so this bounds only a runaway. */
export const EARLY_LOG_LIMIT = 1_000;

/**
 * The lines a process logs before its file logger is loaded (pino is not loaded before Core answers its first
 * request), kept in order with their own times, then handed to the logger, or written without it at exit. Past
 * `limit`, the oldest are dropped and counted, so the newest lines (the ones that explain an exit) survive.
 */
export class EarlyLogBuffer implements LogSink {
  readonly #records: LogRecord[] = [];
  readonly #limit: number;
  #dropped = 0;

  constructor(limit = EARLY_LOG_LIMIT) {
    this.#limit = limit;
  }

  get size(): number {
    return this.#records.length;
  }

  write(record: LogRecord): void {
    if (this.#records.length >= this.#limit) {
      this.#records.shift();
      this.#dropped += 1;
    }
    this.#records.push(record);
  }

  /** Hands every kept record to `sink` in order (a note of any dropped first) and empties the buffer. */
  drainInto(sink: LogSink): void {
    const records = this.#records.splice(0);
    if (this.#dropped > 0) {
      const first = records[0];
      sink.write({
        time: first?.time ?? new Date().toISOString(),
        level: "warn",
        message: "dropped the oldest log lines kept before the log file was opened",
        fields: { dropped: this.#dropped },
      });
      this.#dropped = 0;
    }
    for (const record of records) sink.write(record);
  }
}
