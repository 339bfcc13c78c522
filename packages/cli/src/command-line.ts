import { parseArgs, type ParseArgsConfig } from "node:util";
import { CORE_VERSION } from "@pedelec/core-client/core-version";

/** What every Pedelec command prints for `--version`. */
export const PEDELEC_VERSION = CORE_VERSION;

/** A command line that cannot be run as given: printed with the usage, exit 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** The flags every `pedelec` command takes besides its own. */
const COMMON_OPTIONS = { help: { type: "boolean", short: "h" }, version: { type: "boolean" } } as const satisfies Options;

/**
 * Parses one command's flags strictly. Node's messages for an unknown or malformed flag become a UsageError, so every
 * command refuses them the same way (exit 2, with its usage).
 */
export function parseCommandLine<T extends Options>(
  args: readonly string[],
  options: T,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: typeof COMMON_OPTIONS & T; allowPositionals: boolean; strict: true }>> {
  try {
    return parseArgs({ args: [...args], options: { ...COMMON_OPTIONS, ...options }, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
