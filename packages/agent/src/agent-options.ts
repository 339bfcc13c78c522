import { isAbsolute } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { DEFAULT_AGENT_MAX_TOOL_ROUNDS, OLLAMA_THINK_LEVELS, type OllamaThinkLevel } from "@pedelec/protocol/agent-wire";
import { parseBaseUrl as parseEndpointBaseUrl } from "@pedelec/core/providers/ollama/ollama-endpoint";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

export const AGENT_USAGE = `Usage:
  pedelec-agent run --workspace <absolute dir> --model <name> --base-url <url> [--conversation <id>]
                    [--num-ctx <n>] [--temperature <x>] [--think on|off|low|medium|high]
                    [--max-tool-rounds <n>]
The prompt is read from stdin; the endpoint's API key from $PEDELEC_OLLAMA_API_KEY.`;

/** The pattern of a conversation id (the same as agent-wire's conversation-started), which keeps it a plain file name. */
export const CONVERSATION_ID_PATTERN = /^[A-Za-z0-9_-]{8,128}$/;

/** The flags `run` takes. */
const AGENT_FLAGS = {
  workspace: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  conversation: { type: "string" },
  "num-ctx": { type: "string" },
  temperature: { type: "string" },
  think: { type: "string" },
  "max-tool-rounds": { type: "string" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

/** One turn's settings, from the command line. */
export interface AgentOptions {
  workspace: string;
  model: string;
  baseUrl: URL;
  conversationId?: string;
  numCtx?: number;
  temperature?: number;
  /** Ollama's `think`: on or off, or a level for the models that take one (gpt-oss). */
  think?: boolean | OllamaThinkLevel;
  maxToolRounds: number;
}

/** Parses `run …`; every refusal is a PedelecError the caller prints as turn-failed. */
export function parseAgentOptions(argv: readonly string[]): AgentOptions {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof AGENT_FLAGS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: AGENT_FLAGS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new PedelecError("INVALID_INPUT", `${(error as Error).message}\n${AGENT_USAGE}`);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1 || positionals[0] !== "run") {
    throw new PedelecError("INVALID_INPUT", `expected the one command \`run\`, got ${JSON.stringify(positionals)}\n${AGENT_USAGE}`);
  }
  const workspace = values.workspace;
  if (workspace === undefined || !isAbsolute(workspace)) {
    throw new PedelecError("WORKSPACE_PATH_INVALID", `--workspace must be an absolute folder\n${AGENT_USAGE}`);
  }
  const model = values.model?.trim();
  if (model === undefined || model === "") throw new PedelecError("MODEL_REQUIRED", `--model is required\n${AGENT_USAGE}`);
  const options: AgentOptions = {
    workspace,
    model,
    baseUrl: parseBaseUrl(values["base-url"]),
    maxToolRounds: DEFAULT_AGENT_MAX_TOOL_ROUNDS,
  };
  if (values.conversation !== undefined) {
    if (!CONVERSATION_ID_PATTERN.test(values.conversation)) {
      throw new PedelecError("INVALID_INPUT", "--conversation must be 8–128 letters, digits, '_' or '-'");
    }
    options.conversationId = values.conversation;
  }
  if (values["num-ctx"] !== undefined) options.numCtx = positiveInteger("--num-ctx", values["num-ctx"], 16 * 1024 * 1024);
  if (values["max-tool-rounds"] !== undefined) options.maxToolRounds = positiveInteger("--max-tool-rounds", values["max-tool-rounds"], 10_000);
  if (values.temperature !== undefined) {
    const temperature = Number(values.temperature);
    if (values.temperature.trim() === "" || !Number.isFinite(temperature) || temperature < 0 || temperature > 100) {
      throw new PedelecError("INVALID_INPUT", "--temperature must be a number from 0 to 100");
    }
    options.temperature = temperature;
  }
  if (values.think !== undefined) {
    options.think = parseThink(values.think);
  }
  return options;
}

function parseThink(value: string): boolean | OllamaThinkLevel {
  if (value === "on" || value === "off") return value === "on";
  if ((OLLAMA_THINK_LEVELS as readonly string[]).includes(value)) return value as OllamaThinkLevel;
  throw new PedelecError("INVALID_INPUT", `--think must be on, off or one of ${OLLAMA_THINK_LEVELS.join(", ")}`);
}

/** The `--base-url` value, checked by the same rule Core applies to `ollama.baseUrl`; refused before any request. */
export function parseBaseUrl(text: string | undefined): URL {
  if (text === undefined || text.trim() === "")
    throw new PedelecError("OLLAMA_BASE_URL_INVALID", "--base-url is required, e.g. http://127.0.0.1:11434");
  return parseEndpointBaseUrl(text.trim());
}

function positiveInteger(flag: string, text: string, maximum: number): number {
  if (!/^[1-9][0-9]*$/.test(text) || Number(text) > maximum) {
    throw new PedelecError("INVALID_INPUT", `${flag} must be a whole number from 1 to ${maximum}`);
  }
  return Number(text);
}
