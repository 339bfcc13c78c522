/** Structured log lines on stderr (Core's stdout/stderr go to a log file when it runs detached). */
export function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
}
