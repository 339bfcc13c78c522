import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { readLoggingDebug } from "./logging-debug-setting.js";

let folder: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-logging-debug-"));
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

it("is on only when settings.json says logging.debug is true", async () => {
  const file = join(folder, "settings.json");
  expect(await readLoggingDebug(file)).toBe(false);
  for (const [text, expected] of [
    [JSON.stringify({ logging: { debug: true } }), true],
    [JSON.stringify({ logging: { debug: false } }), false],
    [JSON.stringify({ logging: { debug: "true" } }), false],
    [JSON.stringify({ logging: null }), false],
    ["null", false],
    ["{ half an edit", false],
  ] as const) {
    await writeFile(file, text);
    expect(await readLoggingDebug(file), text).toBe(expected);
  }
});
