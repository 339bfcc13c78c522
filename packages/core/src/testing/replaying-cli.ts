import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Writes an executable at `folder/name` that prints the first `lineCount` lines of a recorded run (`fixture`), then
 * waits as a real CLI does between its retries, until it is killed. Returns its path.
 */
export async function replayingThenWaitingCli(folder: string, name: string, fixture: URL, lineCount: number): Promise<string> {
  const lines = readFileSync(fixture, "utf8").split("\n").slice(0, lineCount);
  const script = path.join(folder, name);
  const body = `process.stdout.write(${JSON.stringify(`${lines.join("\n")}\n`)});\nsetInterval(() => {}, 1000);\n`;
  await writeFile(script, `#!${process.execPath}\n${body}`, { mode: 0o755 });
  return script;
}
