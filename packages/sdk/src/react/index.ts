// The React bindings, `@kaoruisaac/pedelec/react`. React is an optional peer dependency of the package; nothing here
// touches the browser at import, so server rendering can import it.
export { PedelecProvider, usePedelec } from "./pedelec-provider.js";
export type { PedelecProviderProps } from "./pedelec-provider.js";
export { usePedelecSession } from "./use-pedelec-session.js";
export { useTool } from "./use-tool.js";
export type {
  PedelecSessionHookStatus,
  SendOutcome,
  SessionChatMessage,
  UsePedelecSessionOptions,
  UsePedelecSessionResult,
} from "./types.js";
