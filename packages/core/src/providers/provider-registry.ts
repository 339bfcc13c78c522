import { PROVIDER_CODES, type ProviderCode } from "@pedelec/protocol/domain";
import type { ProviderAdapter } from "./provider-adapter.js";
import { createClaudeAdapter } from "./claude/claude-adapter.js";
import { createCodexAdapter } from "./codex/codex-adapter.js";
import { createOpencodeAdapter } from "./opencode/opencode-adapter.js";
import { createAntigravityAdapter } from "./antigravity/antigravity-adapter.js";
import { createCursorAdapter } from "./cursor/cursor-adapter.js";
import { createOllamaAdapter } from "./ollama/ollama-adapter.js";

/** The provider adapters Core can drive. */
export interface ProviderRegistry {
  /** The adapter of a provider, or undefined when Pedelec cannot drive it (yet). */
  get(code: ProviderCode): ProviderAdapter | undefined;
  /** Providers with an adapter, in the catalogue's order. */
  supportedCodes(): ProviderCode[];
}

/** One line per provider: its folder's adapter factory. */
const ADAPTER_FACTORIES: Partial<Record<ProviderCode, () => ProviderAdapter>> = {
  claude: () => createClaudeAdapter(),
  codex: () => createCodexAdapter(),
  opencode: () => createOpencodeAdapter(),
  antigravity: () => createAntigravityAdapter(),
  cursor: () => createCursorAdapter(),
  ollama: () => createOllamaAdapter(),
};

export function createProviderRegistry(): ProviderRegistry {
  const adapters = new Map<ProviderCode, ProviderAdapter>();
  for (const code of PROVIDER_CODES) {
    const factory = ADAPTER_FACTORIES[code];
    if (factory) adapters.set(code, factory());
  }
  return {
    get: (code) => adapters.get(code),
    supportedCodes: () => [...adapters.keys()],
  };
}
