import { fstatSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { setLogSink } from "../logger.js";
import { EarlyLogBuffer } from "./early-log-buffer.js";
import { plainLogLine, type LogRecord, type LogSink } from "./log-record.js";
import { redactFields } from "./log-redaction.js";
import type { PinoLogSink } from "./pino-log-sink.js";
import { LOG_ROTATION, RotatingLogFile, type RotationLimits } from "./rotating-log-file.js";

export interface ProcessLogOptions {
  /** PEDELEC_HOME/logs; created 0700 with the first line written. */
  logsDir: string;
  /** The process's own file in it: `core.log`, `native-host.log`. */
  fileName: string;
  rotation?: RotationLimits;
  /**
   * Also write each line to stderr when someone reads it there (a terminal or a pipe): `pedelec start` in a terminal,
   * a parent process that captures it. Not when stderr is a file (a detached Core's) or /dev/null.
   */
  mirrorToWatchedStderr?: boolean;
  /** How many records are kept before the file logger starts (EarlyLogBuffer). */
  earlyLimit?: number;
}

/**
 * A process's log file: `log` (logger.ts) writes to it from the moment it is opened. Until `start` loads pino, records
 * are kept in memory (EarlyLogBuffer), so opening costs a process's start nothing; `start` hands them to pino with
 * their own times. Should the process exit first, the kept records are written synchronously, redacted, without pino.
 * An uncaught exception or unhandled rejection is written as a `fatal` line before the process dies.
 */
export class ProcessLog implements LogSink {
  readonly #file: RotatingLogFile;
  readonly #early: EarlyLogBuffer;
  readonly #mirrorWanted: boolean;
  #mirror: boolean | undefined;
  #fileLogger: FileLogger | undefined;
  #starting: Promise<void> | undefined;
  /** Known once settings were read; until then redaction applies. */
  #debug = false;
  #replaying = false;
  #closed = false;
  #previousSink: LogSink | undefined;
  readonly #onExit = (): void => this.flushSync();
  readonly #onFatal = (error: unknown, origin: string): void => {
    this.write({
      time: new Date().toISOString(),
      level: "fatal",
      message: origin === "unhandledRejection" ? "an unhandled promise rejection ends the process" : "an uncaught exception ends the process",
      fields: { error: describeError(error) },
    });
    this.flushSync();
  };

  private constructor(options: ProcessLogOptions) {
    this.#file = new RotatingLogFile(join(options.logsDir, options.fileName), options.rotation ?? LOG_ROTATION);
    this.#early = new EarlyLogBuffer(options.earlyLimit);
    this.#mirrorWanted = options.mirrorToWatchedStderr ?? false;
  }

  /** Opens the log and makes it where `log` writes, until close(). */
  static open(options: ProcessLogOptions): ProcessLog {
    const processLog = new ProcessLog(options);
    processLog.#previousSink = setLogSink(processLog);
    process.on("exit", processLog.#onExit);
    // A monitor, not a handler: Node still prints the error and exits as it would have.
    process.on("uncaughtExceptionMonitor", processLog.#onFatal);
    return processLog;
  }

  get path(): string {
    return this.#file.path;
  }

  write(record: LogRecord): void {
    if (this.#fileLogger !== undefined) {
      this.#fileLogger.write(record);
      return;
    }
    if (this.#closed) {
      this.#writePlain(record, false);
      return;
    }
    this.#early.write(record);
    if ((record.level !== "debug" || this.#debug) && this.#shouldMirror())
      process.stderr.write(plainLogLine(record, this.#debug ? record.fields : redactFields(record.fields)));
  }

  /**
   * Loads pino and writes the kept records through it; later records go straight to the file. Called once the
   * process has done what it started for (Core: its background start). Safe to call again: one start.
   */
  start(readDebug: () => Promise<boolean> = async () => false): Promise<void> {
    this.#starting ??= (async () => {
      this.#debug = await readDebug().catch(() => false);
      let fileLogger: FileLogger;
      let failure: unknown;
      try {
        const { PinoLogSink } = await import("./pino-log-sink.js");
        fileLogger = new PinoLogSink({ write: (line) => this.#writeLine(line) }, { debug: this.#debug });
      } catch (error) {
        // A broken install or bundle must not cost the log: lines are written as the exit path writes them.
        failure = error;
        fileLogger = { write: (record) => this.#writePlain(record, this.#replaying), setDebug: () => undefined };
      }
      if (this.#closed) return;
      this.#replaying = true;
      try {
        this.#early.drainInto(fileLogger);
      } finally {
        this.#replaying = false;
      }
      this.#fileLogger = fileLogger;
      if (failure !== undefined) {
        this.write({
          time: new Date().toISOString(),
          level: "warn",
          message: "pino could not be loaded; log lines are written without it",
          fields: { error: describeError(failure) },
        });
      }
    })();
    return this.#starting;
  }

  /** Whether debug lines and unredacted fields are written, from the next line on (the `logging.debug` setting). */
  setDebug(debug: boolean): void {
    this.#debug = debug;
    this.#fileLogger?.setDebug(debug);
  }

  /** Writes the kept records now, without pino (at exit, or before a fatal end). */
  flushSync(): void {
    if (this.#early.size === 0) return;
    // Already on stderr, if it is mirrored: they were written there as they were logged.
    this.#early.drainInto({ write: (record) => this.#writePlain(record, true) });
  }

  /** Writes what is kept, stops watching the process, and gives `log` back to where it wrote before. */
  close(): void {
    if (this.#closed) return;
    this.flushSync();
    this.#closed = true;
    this.#fileLogger = undefined;
    process.off("exit", this.#onExit);
    process.off("uncaughtExceptionMonitor", this.#onFatal);
    if (this.#previousSink !== undefined) setLogSink(this.#previousSink);
    this.#file.close();
  }

  #writePlain(record: LogRecord, replayed: boolean): void {
    if (record.level === "debug" && !this.#debug) return;
    this.#writeLine(plainLogLine(record, this.#debug ? record.fields : redactFields(record.fields)), replayed);
  }

  #writeLine(line: string, replayed = this.#replaying): void {
    try {
      this.#file.write(line);
    } catch {
      // A full disk or a removed folder must not take the process down; the line is lost.
    }
    if (!replayed && this.#shouldMirror()) process.stderr.write(line);
  }

  #shouldMirror(): boolean {
    this.#mirror ??= this.#mirrorWanted && stderrIsWatched();
    return this.#mirror;
  }
}

/** What writes records once the process has started its file logger: pino, or the plain writer if pino failed. */
type FileLogger = LogSink & Pick<PinoLogSink, "setDebug">;

/** A terminal, or a pipe or socket whose other end reads what is written. */
function stderrIsWatched(): boolean {
  try {
    const info = fstatSync(2);
    // node:tty costs Core's start milliseconds: loaded only for a character device, which a terminal is.
    if (info.isCharacterDevice()) return (createRequire(import.meta.url)("node:tty") as typeof import("node:tty")).isatty(2);
    return info.isFIFO() || info.isSocket();
  } catch {
    return false;
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}
