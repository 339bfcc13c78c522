import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import type { PageRequestPayload, PageRequestResult, PageRequestType } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionInfo } from "@pedelec/protocol/requests";
import { Bridge } from "./bridge.js";
import { prepareCreateSession } from "./create-session-input.js";
import { PedelecSession } from "./pedelec-session.js";
import type {
  ApprovalStatus,
  CreateSessionOptions,
  PedelecOptions,
  PedelecSettings,
  ProviderAvailability,
  ToolDefinition,
  ToolNameOf,
} from "./types.js";

/** Default bridge timeout: how long a request waits for the extension (approval time excluded). */
export const DEFAULT_BRIDGE_TIMEOUT_MS = 30_000;
// setTimeout fires at once for delays above 2^31 - 1 ms, so longer timeouts are capped there.
const MAX_BRIDGE_TIMEOUT_MS = 2_147_483_647;

/**
 * The page's client of the Pedelec extension. Construct it in the browser (after hydration); on a server or
 * in a page without the extension it still constructs, and its calls reject with `EXTENSION_UNAVAILABLE`.
 *
 * @example
 * ```ts
 * const pedelec = new Pedelec();
 * const status = await pedelec.getApprovalStatus();
 * if (status.installed) {
 *   const session = await pedelec.createSession({ provider: "claude", effortLevel: "medium" });
 *   session.onChat((message) => console.log(message.text));
 *   await session.sendText("Hello");
 * }
 * ```
 */
export class Pedelec {
  readonly #bridge: Bridge;

  constructor(options: PedelecOptions = {}) {
    const extensionId =
      typeof options?.extensionId === "string" && options.extensionId.length > 0 ? options.extensionId : DEFAULT_EXTENSION_ID;
    this.#bridge = new Bridge({ extensionId, timeoutMs: normalizeTimeout(options?.bridgeTimeoutMs) });
  }

  /**
   * Creates an agent session. The first call from an origin waits while the extension asks the user for
   * approval. Tool handlers stay in the page; only names, descriptions and schemas are sent.
   *
   * @example
   * ```ts
   * const addTodo = defineTool({
   *   name: "add_todo",
   *   description: "Add a todo item.",
   *   argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
   * });
   * const session = await pedelec.createSession({ skills: { guidance: "Keep the list tidy.", tools: [addTodo] } });
   * session.onTool("add_todo", (args) => ({ added: args }));
   * ```
   */
  async createSession<const TTools extends readonly ToolDefinition[] = readonly []>(
    input?: CreateSessionOptions<TTools>,
  ): Promise<PedelecSession<ToolNameOf<TTools>>> {
    const prepared = prepareCreateSession(input);
    const answer = await this.#bridge.request("createSession", prepared.payload);
    return new PedelecSession<ToolNameOf<TTools>>({
      info: answer.result as SessionInfo,
      generation: answer.generation,
      bridge: this.#bridge,
      inlineHandlers: prepared.inlineHandlers,
    });
  }

  /**
   * Reattaches to a session this origin created earlier (e.g. after a reload with `autoEndOnDisconnect: false`).
   * Events already seen are not replayed. Inline handlers are not known here: register them with `onTool(name, …)`.
   *
   * @example
   * ```ts
   * const session = await pedelec.resumeSession<"add_todo">(savedSessionId);
   * ```
   */
  async resumeSession<TToolName extends string = string>(sessionId: string): Promise<PedelecSession<TToolName>> {
    if (typeof sessionId !== "string" || sessionId.length === 0) {
      throw new PedelecError("INVALID_INPUT", "resumeSession needs a session id");
    }
    const answer = await this.#bridge.request("resumeSession", { sessionId });
    return new PedelecSession<TToolName>({
      info: answer.result as SessionInfo,
      generation: answer.generation,
      bridge: this.#bridge,
      inlineHandlers: new Map(),
    });
  }

  /**
   * Whether the extension is reachable and this origin approved. Never opens the approval popup; when the
   * extension cannot be reached it resolves `{ installed: false, … }` instead of rejecting.
   */
  async getApprovalStatus(): Promise<ApprovalStatus> {
    try {
      const answer = await this.#bridge.request("getApprovalStatus", {});
      return answer.result as PageRequestResult<"getApprovalStatus">;
    } catch (error) {
      if (error instanceof PedelecError && (error.code === "EXTENSION_UNAVAILABLE" || error.code === "EXTENSION_DISCONNECTED")) {
        return { installed: false, approved: false, origin: pageOrigin(), appConnected: false };
      }
      throw error;
    }
  }

  /**
   * Every provider Pedelec knows, whether this machine can run it now, and a sentence saying why not. Needs the
   * origin's approval (CREATE_SESSION_NOT_APPROVED before it).
   *
   * @example
   * ```ts
   * for (const provider of await pedelec.listProviders()) console.log(provider.name, provider.available || provider.error);
   * ```
   */
  async listProviders(): Promise<ProviderAvailability[]> {
    return (await this.#bridge.request("listProviders", {})).result as PageRequestResult<"listProviders">;
  }

  /**
   * The user's defaults (provider, effort level, models); never secrets. Needs the origin's approval.
   *
   * @example
   * ```ts
   * const { defaultProvider } = await pedelec.getSettings();
   * ```
   */
  async getSettings(): Promise<PedelecSettings> {
    return (await this.#bridge.request("getSettings", {})).result as PageRequestResult<"getSettings">;
  }

  /**
   * Low-level escape hatch: sends one request to the extension and returns its result. Known request types
   * are checked against their schemas both ways; the bridge timeout applies.
   *
   * @example
   * ```ts
   * const status = await pedelec.request("getApprovalStatus", {});
   * ```
   */
  request<TType extends PageRequestType>(type: TType, payload: PageRequestPayload<TType>): Promise<PageRequestResult<TType>>;
  request<TResult = unknown>(type: string, payload?: unknown): Promise<TResult>;
  async request(type: string, payload: unknown = {}): Promise<unknown> {
    return (await this.#bridge.request(type, payload)).result;
  }
}

function normalizeTimeout(value: number | undefined): number {
  if (typeof value !== "number" || Number.isNaN(value)) return DEFAULT_BRIDGE_TIMEOUT_MS;
  return Math.min(MAX_BRIDGE_TIMEOUT_MS, Math.max(1, Math.floor(value)));
}

function pageOrigin(): string {
  return typeof location !== "undefined" && typeof location.origin === "string" ? location.origin : "";
}
