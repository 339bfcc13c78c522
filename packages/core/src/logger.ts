import type { LogLevel, LogRecord, LogSink } from "./logging/log-record.js";
import { plainLogLine } from "./logging/log-record.js";
import { redactFields } from "./logging/log-redaction.js";

/**
 * Where lines go when no process log is open (Core started as a library, in tests): stderr, one JSON line each,
 * redacted.
 */
const stderrSink: LogSink = {
  write(record) {
    if (record.level !== "debug") process.stderr.write(plainLogLine(record, redactFields(record.fields)));
  },
};

let sink: LogSink = stderrSink;

/**
 * One structured log line: `time` (ISO), `level`, `message` and `fields`. A process that opened its log file
 * (logging/process-log.ts: Core writes logs/core.log, the native host logs/native-host.log) writes it there;
 * otherwise it goes to stderr. Fields named in logging/log-redaction.ts are written only with `logging.debug` on.
 */
export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  const record: LogRecord = { time: new Date().toISOString(), level, message, fields };
  sink.write(record);
}

/** Makes `next` where `log` writes; returns the sink it replaces. */
export function setLogSink(next: LogSink): LogSink {
  const previous = sink;
  sink = next;
  return previous;
}
