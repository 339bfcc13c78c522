import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { z } from "zod";
import type { ProviderSessionOptions } from "../provider-adapter.js";
import { requireEndpointSettings, requireModel, type OllamaEndpoint } from "./ollama-endpoint.js";

/** What a session of the ollama provider snapshots: the endpoint of settings.json's `ollama` section. */
const endpointOptionsSchema = z.object({ baseUrl: z.string(), apiKey: z.string() });

/** The endpoint a session snapshotted, read back from its provider options; OLLAMA_BASE_URL_INVALID when they hold none. */
export function ollamaEndpointOf(providerOptions: unknown): OllamaEndpoint {
  const parsed = endpointOptionsSchema.safeParse(providerOptions);
  if (!parsed.success) throw new PedelecError("OLLAMA_BASE_URL_INVALID", "the session has no Ollama endpoint");
  return parsed.data;
}

/**
 * An ollama session's own options: the endpoint and key in force when it is created (or restored), a key and a
 * well-formed base URL before the agent is located, then the endpoint's answer that it has the model.
 */
export const OLLAMA_SESSION_OPTIONS: ProviderSessionOptions = {
  read: (settings) => ({ ...settings.ollama }),
  check: (options) => requireEndpointSettings(ollamaEndpointOf(options)),
  prepare: async ({ options, model, signal }) => {
    if (model !== null) await requireModel(ollamaEndpointOf(options), model, signal);
  },
};
