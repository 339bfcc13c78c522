import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CorePaths } from "@pedelec/core/core-paths";

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** A /bin/sh launcher that pins the home and runs `entry` with `node`, passing every argument on. */
export function posixLauncherScript(home: string, node: string, entry: string): string {
  return ["#!/bin/sh", `PEDELEC_HOME=${shellQuote(home)}`, "export PEDELEC_HOME", `exec ${shellQuote(node)} ${shellQuote(entry)} "$@"`, ""].join(
    "\n",
  );
}

/**
 * The same as a Windows `.cmd` file (CRLF lines; `%` doubled, since cmd expands it even inside quotes). Chrome starts a
 * Windows host through cmd.exe, so a `.cmd` serves as the manifest's `path`.
 */
export function windowsLauncherScript(home: string, node: string, entry: string): string {
  const literal = (value: string): string => value.replaceAll("%", "%%");
  return ["@echo off", `set "PEDELEC_HOME=${literal(home)}"`, `"${literal(node)}" "${literal(entry)}" %*`, ""].join("\r\n");
}

/** Programs Pedelec puts on disk as small launchers that pin this Node.js binary and this installation. */
export const LAUNCHED_PROGRAMS = {
  // Chrome starts the host when a page first asks for the agent: the package exports this entry as its one-file bundle.
  "pedelec-native-host": () => fileURLToPath(import.meta.resolve("@pedelec/native-host/native-host-entry")),
  // Pedelec's own agent for Ollama-compatible endpoints; Core runs it as the ollama provider.
  "pedelec-agent": () => fileURLToPath(import.meta.resolve("@pedelec/agent/agent-entry")),
  // The agent's commands run once per tool call or script: their one-file bundles load several times faster.
  "pedelec-cli": () => fileURLToPath(new URL("./agent-commands/pedelec-cli.cjs", import.meta.url)),
  "pedelec-ts-runtime": () => fileURLToPath(new URL("./agent-commands/pedelec-ts-runtime.mjs", import.meta.url)),
  // The name the design documents give the same command.
  "pedelec-deno": () => fileURLToPath(new URL("./agent-commands/pedelec-ts-runtime.mjs", import.meta.url)),
} as const;
export type LaunchedProgram = keyof typeof LAUNCHED_PROGRAMS;

/**
 * Writes PEDELEC_HOME/bin/<program> launchers. Chrome needs an absolute executable for the native host, and agents
 * need `pedelec-cli` on PATH; neither can rely on the user's PATH containing node. Each launcher also pins the home it
 * belongs to: Chrome starts the host with the browser's environment, which knows nothing of a PEDELEC_HOME set in a
 * terminal, and the host must reach the Core of the home it was installed for, never make a second one elsewhere.
 */
export async function writeLaunchers(paths: CorePaths): Promise<Record<LaunchedProgram, string>> {
  await mkdir(paths.binDir, { recursive: true, mode: 0o700 });
  const written = {} as Record<LaunchedProgram, string>;
  for (const [program, entry] of Object.entries(LAUNCHED_PROGRAMS) as [LaunchedProgram, () => string][]) {
    const target = join(paths.binDir, program);
    await writeFile(target, posixLauncherScript(paths.home, process.execPath, entry()), { mode: 0o755 });
    await chmod(target, 0o755);
    written[program] = target;
  }
  return written;
}
