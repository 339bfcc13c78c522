import { readFile } from "node:fs/promises";

/**
 * `logging.debug` from settings.json for a process that does not load Core's settings schema (the native host): true
 * only when the file says exactly `true`; a missing or unreadable file means off. Core reads it through its settings.
 */
export async function readLoggingDebug(settingsFile: string): Promise<boolean> {
  try {
    const raw: unknown = JSON.parse(await readFile(settingsFile, "utf8"));
    if (raw === null || typeof raw !== "object") return false;
    const logging = (raw as { logging?: unknown }).logging;
    return logging !== null && typeof logging === "object" && (logging as { debug?: unknown }).debug === true;
  } catch {
    return false;
  }
}
