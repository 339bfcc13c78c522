/** Levels Pedelec's processes log at; written as these strings. `fatal` is said once, just before a process dies. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "fatal";

/** One log call, as kept until a file logger writes it. */
export interface LogRecord {
  /** ISO time of the call, kept when the line is written later. */
  time: string;
  level: LogLevel;
  message: string;
  fields: Record<string, unknown>;
}

/** Where `log` sends its records: the early buffer, the file logger, or stderr when no process log is open. */
export interface LogSink {
  write(record: LogRecord): void;
}

/**
 * The JSON line for `record` without pino, in the layout pino writes (level, time, pid, fields, message), for lines
 * that must be written before pino is loaded or without it. `fields` must already be redacted as wanted.
 */
export function plainLogLine(record: LogRecord, fields: Record<string, unknown>): string {
  const { level, time, message } = record;
  return `${safeStringify({ level, time, pid: process.pid, ...fields, message })}\n`;
}

/** JSON of the line; a field JSON cannot hold (a cycle, a BigInt) costs the fields, never the line. */
function safeStringify(value: Record<string, unknown>): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    return JSON.stringify({ level: value.level, time: value.time, pid: value.pid, message: value.message, logError: String(error) });
  }
}
