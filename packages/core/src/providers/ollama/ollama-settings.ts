import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { z } from "zod";
import type { ProviderSettingsSection } from "../provider-settings-section.js";
import { DEFAULT_OLLAMA_BASE_URL, parseBaseUrl } from "./ollama-endpoint.js";

/**
 * settings.json's `ollama` section: the Ollama-compatible endpoint Pedelec's own agent talks to. The key is a secret:
 * the file is written 0600, and the key is never returned to a page, printed by `pedelec config get`, or logged.
 * Checked where used (OLLAMA_BASE_URL_INVALID, OLLAMA_API_KEY_REQUIRED), so a bad value never makes the whole file
 * unusable.
 */
const ollamaSettingsSchema = z
  .object({ baseUrl: z.string().default(DEFAULT_OLLAMA_BASE_URL), apiKey: z.string().default("") })
  .default({ baseUrl: DEFAULT_OLLAMA_BASE_URL, apiKey: "" });

/** The ollama provider's settings: `ollama.baseUrl` (empty resets it) and `ollama.apiKey` (empty clears it). */
export const OLLAMA_SETTINGS = {
  schema: ollamaSettingsSchema,
  keys: {
    baseUrl: {
      parse: (value: string) => {
        if (value === "") return DEFAULT_OLLAMA_BASE_URL;
        parseBaseUrl(value);
        return value;
      },
    },
    apiKey: {
      secret: {
        label: "API key",
        description:
          "The key Pedelec's agent sends to Ollama (ollama.com or your own server). It is stored in settings.json (0600) and never shown again.",
      },
      parse: (value: string) => {
        // A key goes into an HTTP header: one line (the message never repeats it).
        if (/[\r\n]/.test(value)) throw new PedelecError("INVALID_INPUT", "ollama.apiKey must be one line");
        return value;
      },
    },
  },
} satisfies ProviderSettingsSection;
