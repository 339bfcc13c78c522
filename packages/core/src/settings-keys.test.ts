import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createProviderRegistry } from "./providers/provider-registry.js";
import { readConfig, setConfig } from "./settings-keys.js";

let folder: string;
let file: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "pedelec-settings-keys-"));
  file = join(folder, "settings.json");
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

it("sets logging.debug to true or false, back to the default when empty, and refuses other values", async () => {
  const providers = createProviderRegistry();
  expect((await readConfig(file, providers))["logging.debug"]).toBe(false);
  await setConfig(file, providers, "logging.debug", "true");
  expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ logging: { debug: true } });
  expect((await readConfig(file, providers))["logging.debug"]).toBe(true);
  await expect(setConfig(file, providers, "logging.debug", "yes")).rejects.toMatchObject({ code: "INVALID_INPUT", message: "logging.debug must be true or false" });
  await setConfig(file, providers, "logging.debug", "false");
  expect((await readConfig(file, providers))["logging.debug"]).toBe(false);
  await setConfig(file, providers, "logging.debug", "");
  expect(JSON.parse(await readFile(file, "utf8")).logging).toEqual({});
  expect((await readConfig(file, providers))["logging.debug"]).toBe(false);
});

it("sets an effort profile checked by the provider's rules, refuses a bad one leaving the file alone, and resets on empty", async () => {
  const providers = createProviderRegistry();
  const claudeHigh = (await readConfig(file, providers))["effortProfiles.claude.high"];
  await setConfig(file, providers, "effortProfiles.claude.high", JSON.stringify(["--effort", "max"]));
  expect(JSON.parse(await readFile(file, "utf8")).effortProfiles).toEqual({ claude: { high: ["--effort", "max"] } });
  const before = await readFile(file, "utf8");
  await expect(setConfig(file, providers, "effortProfiles.claude.low", JSON.stringify(["--model", "opus"]))).rejects.toMatchObject({
    code: "EFFORT_PROFILE_INVALID",
  });
  await expect(setConfig(file, providers, "effortProfiles.claude.low", "--model")).rejects.toMatchObject({ code: "EFFORT_PROFILE_INVALID" });
  expect(await readFile(file, "utf8")).toBe(before);
  await setConfig(file, providers, "effortProfiles.claude.high", "");
  expect(JSON.parse(await readFile(file, "utf8")).effortProfiles).toEqual({});
  expect((await readConfig(file, providers))["effortProfiles.claude.high"]).toEqual(claudeHigh);
});
