import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSettings, SETTINGS_VERSION, SettingsSource, updateSettingsFile } from "./settings.js";

let folder: string;
let file: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-settings-"));
  file = join(folder, "settings.json");
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("settings.json", () => {
  it("reads a file from before versions were recorded, and records the version on the next write", async () => {
    await writeFile(file, JSON.stringify({ defaultProvider: "claude", somethingNewer: true }));
    expect(await loadSettings(file)).toMatchObject({ version: SETTINGS_VERSION, defaultProvider: "claude", defaultEffortLevel: "medium" });
    await updateSettingsFile(file, (raw) => ({ ...raw, defaultEffortLevel: "high" }));
    // Keys this version does not know survive a write.
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      defaultProvider: "claude",
      somethingNewer: true,
      version: SETTINGS_VERSION,
      defaultEffortLevel: "high",
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it("refuses a file written by a newer Pedelec rather than guessing", async () => {
    await writeFile(file, JSON.stringify({ version: SETTINGS_VERSION + 1 }));
    await expect(loadSettings(file)).rejects.toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("written by a newer Pedelec") });
    await expect(updateSettingsFile(file, (raw) => raw)).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });

  it("names the file and the problem, and leaves the file alone when an edit is invalid", async () => {
    await writeFile(file, JSON.stringify({ defaultEffortLevel: "extreme" }));
    await expect(loadSettings(file)).rejects.toMatchObject({
      message: expect.stringMatching(new RegExp(`^${file} is invalid: .*defaultEffortLevel`)),
    });
    await writeFile(file, JSON.stringify({ defaultProvider: "claude" }));
    await expect(updateSettingsFile(file, (raw) => ({ ...raw, defaultProvider: "gemini" }))).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ defaultProvider: "claude" });
  });

  it("reads logging.debug as a boolean that defaults to off, and refuses anything else", async () => {
    expect((await loadSettings(file)).logging).toEqual({ debug: false });
    await writeFile(file, JSON.stringify({ logging: { debug: true } }));
    expect((await loadSettings(file)).logging).toEqual({ debug: true });
    await writeFile(file, JSON.stringify({ logging: { debug: "yes" } }));
    await expect(loadSettings(file)).rejects.toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("logging.debug") });
  });

  it("keeps the last good settings in force while the file is broken, and reports each problem once", async () => {
    const reports: string[] = [];
    const source = new SettingsSource(file, (problem) => reports.push(problem));
    await writeFile(file, JSON.stringify({ defaultProvider: "claude" }));
    expect((await source.current()).defaultProvider).toBe("claude");
    await writeFile(file, "{ half an edit");
    expect((await source.current()).defaultProvider).toBe("claude");
    expect((await source.current()).defaultProvider).toBe("claude");
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain(`${file} is not valid JSON`);
    await writeFile(file, JSON.stringify({ defaultProvider: "codex" }));
    expect((await source.current()).defaultProvider).toBe("codex");
  });
});
