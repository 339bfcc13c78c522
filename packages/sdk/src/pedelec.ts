import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import type { PageRequestPayload, PageRequestResult, PageRequestType } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import type { CreateSessionInput, SessionInfo } from "@pedelec/protocol/requests";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { abortError, checkSignal, untilAborted } from "./abort.js";
import { Bridge, type BridgeAnswer } from "./bridge.js";
import { prepareCreateSession, prepareResumeTools } from "./create-session-input.js";
import { injectedExtensionRuntime } from "./extension-port.js";
import { PedelecSession } from "./pedelec-session.js";
import { ToolCallLedger } from "./tool-call-ledger.js";
import type {
  ApprovalStatus,
  CreateSessionOptions,
  CreateSessionRequestOptions,
  PedelecAvailability,
  PedelecOptions,
  PedelecSettings,
  ProviderAvailability,
  ResumeSessionOptions,
  ToolArgsMap,
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
  /** This page's tool calls: one port is one claimant for Core, whatever the number of handles. */
  readonly #toolCalls = new ToolCallLedger();

  constructor(options: PedelecOptions = {}) {
    const extensionId = typeof options?.extensionId === "string" && options.extensionId.length > 0 ? options.extensionId : DEFAULT_EXTENSION_ID;
    this.#bridge = new Bridge({
      extensionId,
      timeoutMs: normalizeTimeout(options?.bridgeTimeoutMs),
      runtime: injectedExtensionRuntime(options),
    });
  }

  /**
   * Creates an agent session. The first call from an origin waits while the extension asks the user for
   * approval. Tool handlers stay in the page; only names, descriptions and schemas are sent (a Standard Schema as its
   * JSON Schema). Each tool's own `handler` is registered; `session.onTool(name, …)` replaces it. `options.signal` gives
   * up waiting (see `CreateSessionRequestOptions`).
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
    options?: CreateSessionRequestOptions,
  ): Promise<PedelecSession<ToolNameOf<TTools>, ToolArgsMap<TTools>>> {
    const prepared = prepareCreateSession(input);
    const signal = checkSignal(options?.signal, "createSession");
    const aborted = (): PedelecError => requestAborted(signal!, "createSession");
    if (signal?.aborted) throw aborted();
    const answer = await untilAborted(this.#bridge.request("createSession", prepared.payload), signal, aborted, (late) => this.#endAbandoned(late));
    const unconfirmed = unconfirmedExplicitSetup(prepared.payload, answer.result);
    if (unconfirmed !== undefined) {
      this.#endAbandoned(answer);
      throw unconfirmed;
    }
    return new PedelecSession<ToolNameOf<TTools>, ToolArgsMap<TTools>>({
      info: answer.result,
      generation: answer.generation,
      bridge: this.#bridge,
      inlineHandlers: prepared.inlineHandlers,
      argsValidators: prepared.argsValidators,
      toolCalls: this.#toolCalls,
    });
  }

  /**
   * Reattaches to a session this origin created earlier (e.g. after a reload with `autoEndOnDisconnect: false`, or
   * from a second tab). With `options.afterSeq` (the newest `context.seq` the page handled) the events it missed are
   * replayed once, in order; without it only new events arrive. Either way tool calls still waiting for a page are run
   * here unless another tab already took them, and a turn running now is followed to its end (reported through the
   * callbacks; no `sendText()` promise belongs to it). Pass the session's tool definitions as `options.tools` to register
   * their own handlers and argument checks (nothing is sent) and type `onTool` by them; or register handlers with
   * `onTool(name, …)` right after the await, before anything is dispatched.
   *
   * Rejects with `INVALID_INPUT` (an empty id, a bad `afterSeq`, invalid `tools`), `THREAD_NOT_FOUND` (an unknown id,
   * or another origin's session: Core answers both alike), or the abort error of `options.signal`.
   *
   * @example
   * ```ts
   * const session = await pedelec.resumeSession(savedSessionId, { afterSeq: savedLastSeq, tools: [addTodo] });
   * session.onTool("add_todo", (args) => ({ added: args }));
   * const named = await pedelec.resumeSession<"add_todo">(otherSessionId);
   * named.onTool("add_todo", (args) => ({ added: args }));
   * ```
   */
  resumeSession<const TTools extends readonly ToolDefinition[]>(
    sessionId: string,
    options: ResumeSessionOptions<TTools> & { tools: TTools },
  ): Promise<PedelecSession<ToolNameOf<TTools>, ToolArgsMap<TTools>>>;
  resumeSession<TToolName extends string = string>(sessionId: string, options?: ResumeSessionOptions): Promise<PedelecSession<TToolName>>;
  async resumeSession(sessionId: string, options?: ResumeSessionOptions): Promise<PedelecSession> {
    if (typeof sessionId !== "string" || sessionId.length === 0) {
      throw new PedelecError("INVALID_INPUT", "resumeSession needs a session id");
    }
    const tools = prepareResumeTools(options?.tools);
    const signal = checkSignal(options?.signal, "resumeSession");
    const afterSeq = options?.afterSeq;
    const aborted = (): PedelecError => requestAborted(signal!, "resumeSession");
    if (signal?.aborted) throw aborted();
    const payload = afterSeq === undefined ? { sessionId } : { sessionId, afterSeq };
    // Whatever arrives for the session before the handle exists is handed to it, not lost.
    const backlog: SessionEventEnvelope[] = [];
    const stopCollecting = this.#bridge.onEvent((envelope) => {
      if (envelope.sessionId === sessionId) backlog.push(envelope);
    });
    let answer: BridgeAnswer<SessionInfo>;
    try {
      answer = await untilAborted(this.#bridge.request("resumeSession", payload), signal, aborted);
    } finally {
      stopCollecting();
    }
    return new PedelecSession({
      info: answer.result,
      generation: answer.generation,
      bridge: this.#bridge,
      inlineHandlers: tools.inlineHandlers,
      argsValidators: tools.argsValidators,
      toolCalls: this.#toolCalls,
      backlog,
      ...(afterSeq === undefined ? {} : { afterSeq }),
    });
  }

  /**
   * Whether the extension is reachable and this origin approved. Never opens the approval popup; when the
   * extension cannot be reached it resolves `{ installed: false, … }` instead of rejecting.
   */
  async getApprovalStatus(): Promise<ApprovalStatus> {
    try {
      const answer = await this.#bridge.request("getApprovalStatus", {});
      return answer.result;
    } catch (error) {
      if (error instanceof PedelecError && (error.code === "EXTENSION_UNAVAILABLE" || error.code === "EXTENSION_DISCONNECTED")) {
        return { installed: false, approved: false, origin: pageOrigin(), appConnected: false, appLaunched: false };
      }
      throw error;
    }
  }

  /**
   * Whether a session could be created now, part by part: the extension, this origin's approval, and the desktop
   * runtime (asked with one cheap request when the origin is approved, which starts the desktop runtime if it is not
   * running). Never opens the approval popup and never creates a session; never rejects (what went wrong is in
   * `error`).
   *
   * @example
   * ```ts
   * const { available, extension, approval, desktop, error } = await pedelec.checkAvailability();
   * if (available) connectButton.hidden = false;
   * else if (!extension.available) showInstallHint();
   * else if (!approval.approved) connectButton.hidden = false; // createSession() asks the user
   * else showDesktopHint(desktop.launchAttempted ? "Pedelec Desktop did not start" : error?.message);
   * ```
   */
  async checkAvailability(): Promise<PedelecAvailability> {
    let status: ApprovalStatus;
    try {
      status = await this.getApprovalStatus();
    } catch (error) {
      return unavailable({ extension: false, approved: false, origin: pageOrigin(), desktop: false }, error);
    }
    const { origin, approved } = status;
    if (!status.installed) {
      return unavailable(
        { extension: false, approved: false, origin, desktop: false },
        new PedelecError("EXTENSION_UNAVAILABLE", "The Pedelec extension is not reachable from this page"),
      );
    }
    if (!approved) {
      return unavailable(
        { extension: true, approved: false, origin, desktop: status.appConnected },
        new PedelecError("CREATE_SESSION_NOT_APPROVED", `${origin} is not approved yet; createSession() asks the user`),
      );
    }
    let failure: PedelecError | undefined;
    try {
      await this.#bridge.request("getSettings", {});
    } catch (error) {
      failure = PedelecError.from(error, "CORE_RUNTIME_UNAVAILABLE");
    }
    const launchAttempted = await this.#launchAttempted(status, failure);
    if (failure !== undefined) {
      return unavailable({ extension: true, approved: true, origin, desktop: false, launchAttempted }, failure);
    }
    return {
      available: true,
      extension: { available: true },
      approval: { approved: true, origin },
      desktop: { available: true, launchAttempted },
    };
  }

  /**
   * Whether the native host had to start the desktop runtime, in the extension's words (`appLaunched`), read after the
   * request that reached for it: the status read before may predate the host's attempt.
   */
  async #launchAttempted(before: ApprovalStatus, failure: PedelecError | undefined): Promise<boolean> {
    if (failure?.code === "NATIVE_HOST_UNAVAILABLE") return false;
    if (before.appConnected) return before.appLaunched;
    const after = await this.getApprovalStatus().catch(() => undefined);
    return after?.appLaunched ?? false;
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
    return (await this.#bridge.request("listProviders", {})).result;
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
    return (await this.#bridge.request("getSettings", {})).result;
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
    return (await this.#bridge.requestAnyType(type, payload)).result;
  }

  /** A session Core created for a createSession() whose caller gave up: nobody will ever hold it, so it ends now. */
  #endAbandoned(answer: BridgeAnswer<SessionInfo>): void {
    const { sessionId } = answer.result;
    this.#bridge.request("endSession", { sessionId }).catch(() => {
      // Best effort: with autoEndOnDisconnect the extension ends it anyway when this page goes.
    });
  }
}

/**
 * A page that names an explicit effort gets a session only from a Core that says it applied it, and the model with it:
 * one that answers without them did not (PROTOCOL_VERSION_MISMATCH, naming Core as the part to update).
 */
function unconfirmedExplicitSetup(asked: Pick<CreateSessionInput, "model" | "effort">, applied: SessionInfo): PedelecError | undefined {
  if (asked.effort === undefined) return undefined;
  if (applied.effort === asked.effort && applied.model === asked.model && applied.effortLevel === null) return undefined;
  return new PedelecError(
    "PROTOCOL_VERSION_MISMATCH",
    `Pedelec Desktop did not confirm the explicit model and effort (${asked.model}, ${asked.effort}) this page asked for; update it`,
    {
      part: "core",
      expected: PROTOCOL_VERSION,
      asked: { model: asked.model, effort: asked.effort },
      applied: { model: applied.model, effort: applied.effort ?? null, effortLevel: applied.effortLevel },
    },
  );
}

interface AvailabilityParts {
  extension: boolean;
  approved: boolean;
  origin: string;
  desktop: boolean;
  launchAttempted?: boolean;
}

function unavailable(parts: AvailabilityParts, error: unknown): PedelecAvailability {
  return {
    available: false,
    extension: { available: parts.extension },
    approval: { approved: parts.approved, origin: parts.origin },
    desktop: { available: parts.desktop, launchAttempted: parts.launchAttempted ?? false },
    error: PedelecError.from(error, "SDK_TRANSPORT_ERROR"),
  };
}

/** Gives up on a request: the abort reason when the app gave a PedelecError, else SDK_TRANSPORT_ERROR. */
function requestAborted(signal: AbortSignal, type: string): PedelecError {
  return abortError(signal, () => new PedelecError("SDK_TRANSPORT_ERROR", `${type} was aborted`, { aborted: true }));
}

function normalizeTimeout(value: number | undefined): number {
  if (typeof value !== "number" || Number.isNaN(value)) return DEFAULT_BRIDGE_TIMEOUT_MS;
  return Math.min(MAX_BRIDGE_TIMEOUT_MS, Math.max(1, Math.floor(value)));
}

function pageOrigin(): string {
  return typeof location !== "undefined" && typeof location.origin === "string" ? location.origin : "";
}
