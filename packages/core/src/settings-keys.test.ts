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
  await expect(setConfig(file, providers, "logging.debug", "yes")).rejects.toMatchObject({
    code: "INVALID_INPUT",
    message: "logging.debug must be true or false",
  });
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

it("sets each limit, bytes with or without a binary unit, refuses values out of bounds, and resets on empty", async () => {
  const providers = createProviderRegistry();
  expect(await readConfig(file, providers)).toMatchObject({
    "limits.liveSessionsPerOrigin": 50,
    "limits.assetBytesPerSession": 1024 ** 3,
    "limits.assetBytesPerOrigin": 2 * 1024 ** 3,
    "limits.minFreeDiskBytes": 1024 ** 3,
  });
  await setConfig(file, providers, "limits.liveSessionsPerOrigin", "8");
  await setConfig(file, providers, "limits.assetBytesPerSession", "512MiB");
  await setConfig(file, providers, "limits.assetBytesPerOrigin", "3 GiB");
  await setConfig(file, providers, "limits.minFreeDiskBytes", "0");
  expect(JSON.parse(await readFile(file, "utf8")).limits).toEqual({
    liveSessionsPerOrigin: 8,
    assetBytesPerSession: 512 * 1024 ** 2,
    assetBytesPerOrigin: 3 * 1024 ** 3,
    minFreeDiskBytes: 0,
  });
  const before = await readFile(file, "utf8");
  for (const [key, value] of [
    ["limits.liveSessionsPerOrigin", "0"],
    ["limits.liveSessionsPerOrigin", "2GiB"],
    ["limits.liveSessionsPerOrigin", "1.5"],
    ["limits.assetBytesPerSession", "1KiB"],
    ["limits.assetBytesPerOrigin", "2 furlongs"],
    ["limits.minFreeDiskBytes", "-1"],
    ["limits.minFreeDiskBytes", "99999999TiB"],
  ] as const) {
    await expect(setConfig(file, providers, key, value), `${key} ${value}`).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining(key),
    });
  }
  expect(await readFile(file, "utf8")).toBe(before);
  await setConfig(file, providers, "limits.assetBytesPerSession", "");
  expect((await readConfig(file, providers))["limits.assetBytesPerSession"]).toBe(1024 ** 3);
});
