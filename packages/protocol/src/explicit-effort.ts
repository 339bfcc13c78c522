import { EXPLICIT_EFFORTS, PROVIDER_NAMES, type ExplicitEffort, type ProviderCode } from "./domain.js";
import { OLLAMA_THINK_LEVELS } from "./agent-wire.js";
import { PedelecError } from "./pedelec-error.js";

/**
 * The explicit efforts each provider's CLI has a setting for: Claude Code's `--effort` has every level, Codex documents
 * `model_reasoning_effort` up to xhigh, OpenCode's `--variant` takes the model's own variant names, Pedelec's own agent
 * passes Ollama's `think` levels, and Cursor's and Antigravity's CLIs have none (their model names carry the effort).
 * Core's adapters map these to argv; Core and the testing kit refuse any other with EFFORT_NOT_SUPPORTED.
 */
export const PROVIDER_EXPLICIT_EFFORTS: Readonly<Record<ProviderCode, readonly ExplicitEffort[]>> = {
  claude: EXPLICIT_EFFORTS,
  codex: ["low", "medium", "high", "xhigh"],
  opencode: EXPLICIT_EFFORTS,
  ollama: OLLAMA_THINK_LEVELS,
  cursor: [],
  antigravity: [],
};

/**
 * EFFORT_NOT_SUPPORTED for an effort a provider lacks, with `details { provider, effort, supported }`; with `model` when
 * the levels are that model's (OpenCode's variants), and then also `details.model`.
 */
export function effortNotSupported(
  provider: ProviderCode,
  effort: ExplicitEffort,
  supported: readonly ExplicitEffort[],
  model?: string,
): PedelecError {
  const name = model === undefined ? PROVIDER_NAMES[provider] : `${PROVIDER_NAMES[provider]}'s model ${model}`;
  const message =
    supported.length > 0
      ? `${name} has no effort ${effort}: it has ${supported.join(", ")}`
      : model === undefined
        ? `${name} has no effort setting (its model names carry the effort): leave out effort`
        : `${name} has no effort levels (or is not a model it lists): leave out effort`;
  return new PedelecError("EFFORT_NOT_SUPPORTED", message, {
    provider,
    effort,
    supported: [...supported],
    ...(model === undefined ? {} : { model }),
  });
}
