import { describe, expect, it } from "vitest";
import { CONFIG_KEYS, SECRET_CONFIG_KEYS } from "../settings-keys.js";
import { settingsFileSchema } from "../settings.js";
import { providerConfigKeys, PROVIDER_SETTINGS } from "./provider-settings.js";

describe("providers' own settings sections", () => {
  it("are part of the settings schema, each with its defaults under its code", () => {
    const defaults = settingsFileSchema.parse({}) as Record<string, unknown>;
    for (const [code, section] of Object.entries(PROVIDER_SETTINGS)) expect(defaults[code]).toEqual(section.schema.parse(undefined));
    expect(defaults.ollama).toEqual({ baseUrl: "http://127.0.0.1:11434", apiKey: "" });
  });

  it("give `pedelec config` their keys, the secret ones marked, in the order their folders declare them", () => {
    const keys = providerConfigKeys().map(({ key }) => key);
    expect(keys).toEqual(["ollama.baseUrl", "ollama.apiKey"]);
    for (const key of keys) expect(CONFIG_KEYS).toContain(key);
    expect(SECRET_CONFIG_KEYS).toEqual(["ollama.apiKey"]);
  });

  it("check each value as the provider checks it where it is used", () => {
    const { baseUrl, apiKey } = PROVIDER_SETTINGS.ollama.keys;
    expect(baseUrl.parse("")).toBe("http://127.0.0.1:11434");
    expect(baseUrl.parse("https://ollama.example/")).toBe("https://ollama.example/");
    expect(() => baseUrl.parse("ftp://127.0.0.1/")).toThrow(expect.objectContaining({ code: "OLLAMA_BASE_URL_INVALID" }));
    expect(apiKey.parse("")).toBe("");
    expect(() => apiKey.parse("one\ntwo")).toThrow(expect.objectContaining({ code: "INVALID_INPUT", message: "ollama.apiKey must be one line" }));
  });
});
