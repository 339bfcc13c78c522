import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { Settings } from "../../settings.js";
import { isModelInstalled, listInstalledModels } from "./ollama-endpoint.js";

const ENDPOINT_PROBE_TIMEOUT_MS = 5_000;

/**
 * Whether the Ollama endpoint answers with the key and has the default model: Pedelec's own agent is always there,
 * so this is what "available" means for ollama. Returns the reason when it cannot be used.
 */
export async function ollamaReadinessProblem(settings: Settings): Promise<string | null> {
  try {
    const installed = await listInstalledModels(settings.ollama, AbortSignal.timeout(ENDPOINT_PROBE_TIMEOUT_MS));
    const model = settings.defaultModels.ollama;
    if (model !== undefined && !isModelInstalled(model, installed)) {
      return `the default model ${model} is not installed at ${settings.ollama.baseUrl}; run \`ollama pull ${model}\``;
    }
    return null;
  } catch (error) {
    return PedelecError.from(error, "OLLAMA_UNAVAILABLE").message;
  }
}
