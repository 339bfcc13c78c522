import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { LOG_LEVELS, type LogLevel, type PanelLogLine, type PanelLogsAnswer } from "./control-panel-wire.js";

/** How much of the log files is read for one query: the newest bytes of the newest files. */
export const LOG_READ_LIMIT_BYTES = 8 * 1024 * 1024;

/** core.log, and what rotation leaves beside it: core.log.1, core.1.log, core.log.2026-05-01… */
const LOG_FILE = /^core(\.[\w-]+)?\.log(\.[\w-]+)?$/;

/** pino writes levels as numbers. */
const PINO_LEVELS: Record<number, LogLevel> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

export interface LogQuery {
  text: string;
  level: LogLevel;
  limit: number;
}

/**
 * Core's recent log lines, newest first, that match `query`: the current file and its rotated predecessors, newest
 * file first, at most LOG_READ_LIMIT_BYTES in all. Lines that are not JSON objects (a crash trace, a half-written
 * line) are skipped; `message` and pino's `msg` are both read.
 */
export async function readRecentLogs(logsDir: string, query: LogQuery): Promise<PanelLogsAnswer> {
  const files = await logFilesNewestFirst(logsDir);
  const needle = query.text.toLowerCase();
  const least = LOG_LEVELS.indexOf(query.level);
  const lines: PanelLogLine[] = [];
  let budget = LOG_READ_LIMIT_BYTES;
  let truncated = false;
  for (const file of files) {
    if (budget <= 0) {
      truncated = true;
      break;
    }
    const { text, cut } = await readTail(join(logsDir, file.name), file.size, budget);
    budget -= file.size;
    truncated ||= cut;
    const rows = text.split("\n");
    for (let index = rows.length - 1; index >= 0; index -= 1) {
      const line = parseLogLine(rows[index]!, file.name);
      if (line === undefined) continue;
      if (least > 0 && (line.level === null || LOG_LEVELS.indexOf(line.level) < least)) continue;
      if (needle !== "" && !`${line.message} ${JSON.stringify(line.fields)}`.toLowerCase().includes(needle)) continue;
      if (lines.length === query.limit) return { lines, truncated: true };
      lines.push(line);
    }
  }
  return { lines, truncated };
}

async function logFilesNewestFirst(logsDir: string): Promise<{ name: string; size: number; modifiedMs: number }[]> {
  let names: string[];
  try {
    names = (await readdir(logsDir)).filter((name) => LOG_FILE.test(name));
  } catch {
    return [];
  }
  const files = await Promise.all(
    names.map(async (name) => {
      const info = await stat(join(logsDir, name)).catch(() => undefined);
      return info?.isFile() ? { name, size: info.size, modifiedMs: info.mtimeMs } : undefined;
    }),
  );
  // The file being written is the newest; rotated ones are older, whatever their numbering scheme.
  return files
    .filter((file) => file !== undefined)
    .sort((first, second) => second.modifiedMs - first.modifiedMs || (first.name === "core.log" ? -1 : second.name === "core.log" ? 1 : 0));
}

/** The last `budget` bytes of a file, starting at a line boundary when cut. */
async function readTail(path: string, size: number, budget: number): Promise<{ text: string; cut: boolean }> {
  const length = Math.min(size, budget);
  const handle = await open(path, "r").catch(() => undefined);
  if (handle === undefined) return { text: "", cut: false };
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, size - length);
    let text = buffer.subarray(0, bytesRead).toString("utf8");
    const cut = length < size;
    if (cut) text = text.slice(text.indexOf("\n") + 1);
    return { text, cut };
  } finally {
    await handle.close();
  }
}

/** One JSON log line, or undefined when it is not one. */
export function parseLogLine(text: string, file: string): PanelLogLine | undefined {
  if (!text.startsWith("{")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
  const { time, level, message, msg, ...fields } = parsed as Record<string, unknown>;
  const said = typeof message === "string" ? message : typeof msg === "string" ? msg : "";
  return { time: timeOf(time), level: levelOf(level), message: said, fields, file };
}

function timeOf(time: unknown): string | null {
  const date = typeof time === "number" ? new Date(time) : typeof time === "string" ? new Date(time) : undefined;
  return date !== undefined && Number.isFinite(date.getTime()) ? date.toISOString() : null;
}

function levelOf(level: unknown): LogLevel | null {
  if (typeof level === "number") return PINO_LEVELS[level] ?? null;
  if (typeof level === "string" && (LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  return null;
}
