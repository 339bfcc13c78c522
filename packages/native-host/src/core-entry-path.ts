import { fileURLToPath } from "node:url";

/** The program the host starts as Core: Core's published entry (its one-file bundle), never its internals. */
export function coreEntryPath(): string {
  return fileURLToPath(import.meta.resolve("@pedelec/core/core-entry"));
}
