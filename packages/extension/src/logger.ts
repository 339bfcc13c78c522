import type { ErrorCode } from "@pedelec/protocol/error-codes";

/** Where the worker reports failures no page is left to hear about. */
export interface Logger {
  warn(code: ErrorCode, message: string, details?: unknown): void;
}

export const consoleLogger: Logger = {
  warn(code, message, details) {
    if (details === undefined) console.warn(`[pedelec] ${code}: ${message}`);
    else console.warn(`[pedelec] ${code}: ${message}`, details);
  },
};
