import type { ErrorCode } from "@kaoruisaac/pedelec";

/**
 * Which part of the chain an error comes from, so the page can tell the user where to look:
 * the extension, the approval popup, the local runtime, the agent's provider, the session, or a tool.
 */
export type ErrorLayer = "extension" | "approval" | "native" | "provider" | "session" | "tool" | "workspace" | "asset" | "script" | "page";

export const ERROR_LAYER_LABELS: Readonly<Record<ErrorLayer, string>> = {
  extension: "extension",
  approval: "approval",
  native: "native host / Core",
  provider: "provider",
  session: "session",
  tool: "tool",
  workspace: "workspace",
  asset: "asset",
  script: "script runtime",
  page: "page",
};

/** Codes that do not follow their layer's prefix. */
const EXCEPTIONS: Readonly<Partial<Record<ErrorCode, ErrorLayer>>> = {
  INVALID_ORIGIN: "extension",
  STORAGE_ERROR: "extension",
  CREATE_SESSION_NOT_APPROVED: "approval",
  OPEN_POPUP_FAILED: "approval",
  THREAD_ACCESS_DENIED: "approval",
  MESSAGE_TOO_LARGE: "native",
  THREAD_NOT_FOUND: "session",
  PREPARE_FAILED: "session",
  SEND_TEXT_FAILED: "session",
  END_SESSION_FAILED: "session",
  AUTO_END_SESSION_FAILED: "session",
  INVALID_INPUT: "session",
  SUBMIT_TOOL_RESULT_FAILED: "tool",
  DISK_SPACE_LOW: "workspace",
  PROTOCOL_VERSION_MISMATCH: "extension",
  FULL_ACCESS_NOT_GRANTED: "script",
  FULL_ACCESS_ATTESTATION_INVALID: "script",
  FULL_ACCESS_ATTESTATION_EXPIRED: "script",
  FULL_ACCESS_ATTESTATION_REPLAYED: "script",
};

const PREFIXES: ReadonlyArray<readonly [string, ErrorLayer]> = [
  ["EXTENSION_", "extension"],
  ["SDK_", "extension"],
  ["APPROVAL_", "approval"],
  ["NATIVE_", "native"],
  ["CORE_", "native"],
  ["IPC_", "native"],
  ["DEFAULT_PROVIDER_", "provider"],
  ["PROVIDER_", "provider"],
  ["MODEL_", "provider"],
  ["EFFORT_", "provider"],
  ["OLLAMA_", "provider"],
  ["AGENT_", "provider"],
  ["SESSION_", "session"],
  ["TURN_", "session"],
  ["TOOL_", "tool"],
  ["SUBMIT_", "tool"],
  ["WORKSPACE_", "workspace"],
  ["ASSET_", "asset"],
  ["DENO_", "script"],
];

/**
 * Maps an error code to its layer. Prefix rules keep codes added to the catalogue later in the right place;
 * anything unrecognised (an error of the page itself) is "page".
 */
export function errorLayerOf(code: string): ErrorLayer {
  const exception = (EXCEPTIONS as Readonly<Record<string, ErrorLayer | undefined>>)[code];
  if (exception !== undefined) return exception;
  for (const [prefix, layer] of PREFIXES) {
    if (code.startsWith(prefix)) return layer;
  }
  return "page";
}

/** What the page shows about an error: its code, its message and, for Pedelec's errors, what to do next. */
export interface ErrorDescription {
  code: string;
  message: string;
  /** `PedelecError.remedy`: the next step, with commands in backticks. Undefined for the page's own errors. */
  remedy: string | undefined;
}

/** The code, message and remedy of anything caught, for display: PedelecError-like values keep their code. */
export function describeError(error: unknown): ErrorDescription {
  if (typeof error === "object" && error !== null) {
    const fields = error as { code?: unknown; message?: unknown; remedy?: unknown };
    if (typeof fields.code === "string" && fields.code.length > 0) {
      return {
        code: fields.code,
        message: typeof fields.message === "string" ? fields.message : "",
        remedy: typeof fields.remedy === "string" && fields.remedy !== "" ? fields.remedy : undefined,
      };
    }
    if (typeof fields.message === "string") return { code: "PAGE_ERROR", message: fields.message, remedy: undefined };
  }
  return { code: "PAGE_ERROR", message: String(error), remedy: undefined };
}
