import type { PageRequestType } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { EXTENSION_RUNTIME_OPTION, type ExtensionRuntime } from "../extension-port.js";
import { Pedelec } from "../pedelec.js";
import type { PedelecOptions, ProviderCode } from "../types.js";
import { KitTimers } from "./kit-timers.js";
import { KitAgent } from "./scripted-agent.js";
import { StandInCore } from "./stand-in-core.js";
import { StandInExtension, type RequestOverride } from "./stand-in-extension.js";
import type {
  LoseCoreOptions,
  PedelecTestKitOptions,
  ScriptedAgent,
  TestKitApproval,
  TestKitChromeRuntime,
  TestKitClientOptions,
  TestKitEndReason,
  TestKitEventEnvelope,
  TestKitProviderState,
  TestKitRequest,
  TestKitRequestHandler,
  TestKitSessionInfo,
  TestKitToolCall,
} from "./types.js";

const DEFAULT_ORIGIN = "https://app.test";
const DEFAULT_BRIDGE_TIMEOUT_MS = 5_000;
const DEFAULT_TOOL_TIMEOUT_MS = 2_000;
const DEFAULT_AGENT_IDLE_TIMEOUT_MS = 5_000;
const DEFAULT_WAIT_TIMEOUT_MS = 2_000;

/**
 * Creates a test kit: a real `Pedelec` client wired to an in-page stand-in of the Pedelec extension and desktop
 * runtime, plus a scripted agent that answers the page's messages as the desktop would. Runs in any test runner
 * (vitest, jest) and in a browser; needs no Chrome and patches no global unless asked (`installGlobalChrome()`).
 * Call `dispose()` after each test.
 *
 * @example
 * ```ts
 * import { createPedelecTestKit } from "@kaoruisaac/pedelec/testing";
 *
 * const kit = createPedelecTestKit();
 * kit.agent.onTurn(async (turn) => {
 *   const card = await turn.callTool("add_todo", { title: "Buy milk" });
 *   turn.complete(`Added ${JSON.stringify(card)}`);
 * });
 * const session = await kit.pedelec.createSession({ skills: { guidance: "", tools: [addTodo] } });
 * await session.sendText("Add milk");
 * await kit.dispose();
 * ```
 */
export function createPedelecTestKit(options: PedelecTestKitOptions = {}): PedelecTestKit {
  return new PedelecTestKit(options);
}

/**
 * A stand-in of the Pedelec extension and desktop runtime for tests, with the pages (`Pedelec` clients) connected to
 * it and the agent script that answers their turns. Create it with `createPedelecTestKit()`.
 *
 * @example
 * ```ts
 * const kit = createPedelecTestKit({ approval: "pending" });
 * const creating = kit.pedelec.createSession();
 * await kit.waitForApprovalPrompt();
 * kit.approve();
 * const session = await creating;
 * ```
 */
export class PedelecTestKit {
  /** The origin the kit's pages have. */
  readonly origin: string;
  /** The agent script: `onTurn(handler)` or `nextTurn()`. */
  readonly agent: ScriptedAgent;
  /**
   * A `chrome.runtime` stand-in whose `connect()` reaches the kit's extension, as a page with the kit's origin. For
   * code that builds its own client: see `installGlobalChrome()`.
   */
  readonly runtime: TestKitChromeRuntime;
  /** Every tool call the agent made, in order, each updated as it settles. */
  readonly toolCalls: TestKitToolCall[] = [];
  readonly #options: PedelecTestKitOptions;
  readonly #timers = new KitTimers();
  readonly #agent: KitAgent;
  readonly #extension: StandInExtension;
  readonly #core: StandInCore;
  readonly #waitTimeoutMs: number;
  readonly #pages = new WeakMap<Pedelec, string>();
  readonly #restoreGlobals: Array<() => void> = [];
  #pageCount = 0;
  #idCount = 0;
  readonly #pedelec: Pedelec;
  #disposed = false;

  /** Use `createPedelecTestKit()`. */
  constructor(options: PedelecTestKitOptions = {}) {
    this.#options = { ...options };
    this.origin = options.origin ?? DEFAULT_ORIGIN;
    this.#waitTimeoutMs = positive(options.waitTimeoutMs, DEFAULT_WAIT_TIMEOUT_MS);
    this.#agent = new KitAgent(this.#timers, this.#waitTimeoutMs);
    this.agent = this.#agent;
    this.#extension = new StandInExtension({
      approval: options.approval ?? "approved",
      timers: this.#timers,
      waitTimeoutMs: this.#waitTimeoutMs,
    });
    const extension = this.#extension;
    this.#core = new StandInCore({
      providers: { ...options.providers },
      settings: {
        defaultProvider: options.settings?.defaultProvider === undefined ? "claude" : options.settings.defaultProvider,
        defaultEffortLevel: options.settings?.defaultEffortLevel ?? "medium",
        defaultModels: { ...options.settings?.defaultModels },
      },
      fullAccess: options.fullAccess ?? false,
      prepareTurns: options.prepareTurns ?? true,
      toolTimeoutMs: positive(options.toolTimeoutMs, DEFAULT_TOOL_TIMEOUT_MS),
      agentIdleTimeoutMs: positive(options.agentIdleTimeoutMs, DEFAULT_AGENT_IDLE_TIMEOUT_MS),
      timers: this.#timers,
      nextId: (prefix) => `${prefix}-${String(++this.#idCount).padStart(4, "0")}`,
      publish: (envelope) => extension.routeEvent(envelope),
      runAgent: (turn) => this.#agent.take(turn),
      recordToolCall: (record) => void this.toolCalls.push(record),
      pageOf: (claimant) => extension.pageOf(claimant),
      followers: (sessionId) => extension.followers(sessionId),
    });
    extension.attachCore(this.#core);
    this.runtime = extension.runtimeFor("global", this.origin);
    this.#pedelec = this.createClient();
  }

  /**
   * The kit's first page (`"page-1"`): a real `Pedelec` client connected to the stand-in. Pass it to the code under
   * test, e.g. a React `<PedelecProvider client={kit.pedelec}>`.
   */
  get pedelec(): Pedelec {
    return this.#pedelec;
  }

  /**
   * Another page (a second tab) connected to the same stand-in: it may resume the first page's sessions, and of
   * several pages following a session exactly one runs each tool call.
   *
   * @example
   * ```ts
   * const otherTab = kit.createClient({ name: "tab-2" });
   * const sameSession = await otherTab.resumeSession(session.sessionId);
   * ```
   */
  createClient(options: TestKitClientOptions = {}): Pedelec {
    this.#requireLive();
    const page = options.name ?? `page-${++this.#pageCount}`;
    const clientOptions: PedelecOptions & { [EXTENSION_RUNTIME_OPTION]: ExtensionRuntime } = {
      bridgeTimeoutMs: options.bridgeTimeoutMs ?? positive(this.#options.bridgeTimeoutMs, DEFAULT_BRIDGE_TIMEOUT_MS),
      [EXTENSION_RUNTIME_OPTION]: this.#extension.runtimeFor(page, this.origin),
    };
    const client = new Pedelec(clientOptions);
    this.#pages.set(client, page);
    return client;
  }

  /**
   * Closes a page as when its tab goes away: the extension releases the tool calls it claimed (the other pages get
   * them), and ends its sessions that no page follows any more (`autoEndOnDisconnect`, reason `"disconnected"`). The
   * client is unusable afterwards.
   *
   * @example
   * ```ts
   * kit.closePage(kit.pedelec);
   * expect(kit.session(session.sessionId)?.status).toBe("ended");
   * ```
   */
  closePage(client: Pedelec): void {
    const page = this.#pages.get(client);
    if (page === undefined) throw new Error("kit.closePage(): that client was not created by this kit");
    this.#extension.closePage(page);
  }

  /**
   * Puts `chrome.runtime` in place on `globalThis` for code that constructs its own `new Pedelec()` (which looks for
   * the extension only in a browser page: use a DOM test environment such as jsdom). Returns the function that puts
   * the previous value back; `dispose()` does so too.
   *
   * @example
   * ```ts
   * // @vitest-environment jsdom
   * const uninstall = kit.installGlobalChrome();
   * const pedelec = new Pedelec(); // reaches the kit
   * ```
   */
  installGlobalChrome(): () => void {
    this.#requireLive();
    const holder = globalThis as { chrome?: unknown };
    const hadChrome = Object.hasOwn(holder, "chrome");
    const previous = holder.chrome;
    const base = typeof previous === "object" && previous !== null ? previous : {};
    holder.chrome = { ...base, runtime: this.runtime };
    let restored = false;
    const restore = (): void => {
      if (restored) return;
      restored = true;
      if (hadChrome) holder.chrome = previous;
      else delete holder.chrome;
    };
    this.#restoreGlobals.push(restore);
    return restore;
  }

  /** The sessions that have not ended, as the desktop would report them now. */
  get sessions(): TestKitSessionInfo[] {
    return this.#core.sessions.filter((session) => !session.ended).map((session) => session.info());
  }

  /**
   * One session as the desktop would report it now (also an ended one), or undefined for an unknown id.
   *
   * @example
   * ```ts
   * expect(kit.session(session.sessionId)?.status).toBe("idle");
   * ```
   */
  session(sessionId: string): TestKitSessionInfo | undefined {
    return this.#core.session(sessionId)?.info();
  }

  /**
   * Every event the session sent to its pages, in seq order (copies), each checked against the protocol's schema.
   *
   * @example
   * ```ts
   * expect(kit.events(session.sessionId).map((envelope) => envelope.event.type)).toContain("turn-completed");
   * ```
   */
  events(sessionId: string): TestKitEventEnvelope[] {
    return this.#core.session(sessionId)?.events() ?? [];
  }

  /** Every request the pages sent, in order (after the extension's shape checks). */
  get requests(): readonly TestKitRequest[] {
    return this.#extension.requests;
  }

  /**
   * The requests of one type, in order.
   *
   * @example
   * ```ts
   * expect(kit.requestsOf("sendText").map((request) => (request.payload as { text: string }).text)).toEqual(["Hi"]);
   * ```
   */
  requestsOf(type: string): TestKitRequest[] {
    return this.#extension.requests.filter((request) => request.type === type);
  }

  /**
   * Resolves with the `index`-th request of `type` once a page sent it; rejects after the kit's wait deadline.
   *
   * @example
   * ```ts
   * button.click();
   * const request = await kit.waitForRequest("createSession");
   * ```
   */
  waitForRequest(type: string, options: { index?: number; timeoutMs?: number } = {}): Promise<TestKitRequest> {
    return this.#extension.waitForRequest(type, options.index ?? 0, options.timeoutMs ?? this.#waitTimeoutMs);
  }

  /**
   * Answers one page request type in place of the stand-in (the kit runs no scripts and keeps no asset files, and any
   * request can be made to fail). Returns the function that removes it.
   *
   * @example
   * ```ts
   * kit.onRequest("listProviders", () => { throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", "down"); });
   * ```
   */
  onRequest<TType extends PageRequestType>(type: TType, handler: TestKitRequestHandler<TType>): () => void {
    return this.#extension.onRequest(type, handler as RequestOverride);
  }

  /** The origin's approval state: `"approved"`, `"denied"` or `"pending"`. */
  get approval(): TestKitApproval {
    return this.#extension.approval;
  }

  /**
   * The user approves the origin: pending createSession / resumeSession requests go on.
   *
   * @example
   * ```ts
   * await kit.waitForApprovalPrompt();
   * kit.approve();
   * ```
   */
  approve(): void {
    this.#extension.setApproval("approved");
  }

  /**
   * The user rejects the origin: pending and later createSession / resumeSession requests reject with `APPROVAL_REJECTED`.
   *
   * @example
   * ```ts
   * const creating = kit.pedelec.createSession();
   * await kit.waitForApprovalPrompt();
   * kit.deny();
   * await expect(creating).rejects.toMatchObject({ code: "APPROVAL_REJECTED" });
   * ```
   */
  deny(): void {
    this.#extension.setApproval("denied");
  }

  /**
   * Sets the approval state; `"pending"` makes later createSession / resumeSession requests wait for `approve()`.
   *
   * @example
   * ```ts
   * kit.setApproval("pending"); // as if the user revoked the origin in the extension's options
   * ```
   */
  setApproval(approval: TestKitApproval): void {
    this.#extension.setApproval(approval);
  }

  /**
   * Resolves once a page waits for the user's approval; rejects after the kit's wait deadline.
   *
   * @example
   * ```ts
   * connectButton.click();
   * await kit.waitForApprovalPrompt();
   * expect(screen.getByText("Approve this site in Pedelec")).toBeTruthy();
   * ```
   */
  waitForApprovalPrompt(options: { timeoutMs?: number } = {}): Promise<void> {
    return this.#extension.waitForApprovalPrompt(options.timeoutMs ?? this.#waitTimeoutMs);
  }

  /**
   * Changes which providers are available, for `listProviders()` and later sessions (those not named are available).
   *
   * @example
   * ```ts
   * kit.setProviders({ claude: "Claude Code is not signed in — run `claude login`" });
   * ```
   */
  setProviders(providers: Partial<Record<ProviderCode, TestKitProviderState>>): void {
    this.#core.setProviders(providers);
  }

  /** Whether the desktop runtime is up (false between `loseCore()` and `restoreCore()`). */
  get coreAvailable(): boolean {
    return this.#core.up;
  }

  /**
   * The desktop runtime goes away. Pages following a session are told (`session-interrupted`,
   * `CORE_RUNTIME_UNAVAILABLE`): a running turn's `sendText()` rejects with that code and `onError` reports it. Until
   * `restoreCore()`, requests that need the desktop fail with `CORE_RUNTIME_UNAVAILABLE` and `getApprovalStatus()`
   * reports `appConnected: false`.
   *
   * @example
   * ```ts
   * kit.loseCore();
   * await expect(sending).rejects.toMatchObject({ code: "CORE_RUNTIME_UNAVAILABLE" });
   * ```
   */
  loseCore(options: LoseCoreOptions = {}): void {
    this.#requireLive();
    if (!this.#core.up) return;
    this.#core.lose(options.how ?? "killed");
    this.#extension.interruptSessions(new PedelecError("CORE_RUNTIME_UNAVAILABLE", "the connection to Pedelec Core closed"));
  }

  /**
   * The desktop runtime is back with its sessions. A turn it lost while running fails now with `SESSION_ERROR`
   * (`details.cause: "core-stopped"`); pages re-attach on their next call and get the events they missed.
   *
   * @example
   * ```ts
   * kit.restoreCore();
   * await session.sendText("Try again"); // re-attaches, then sends
   * ```
   */
  restoreCore(): void {
    this.#requireLive();
    this.#core.restore();
  }

  /**
   * Ends a session from the desktop's side, for a reason a page cannot give (e.g. `"expired"`); its pages get
   * `onEnded` with that reason. False when it had already ended.
   *
   * @example
   * ```ts
   * kit.endSession(session.sessionId, "expired");
   * ```
   */
  endSession(sessionId: string, reason: TestKitEndReason = "expired"): boolean {
    this.#requireLive();
    if (!this.#core.up) throw new Error("kit.endSession(): the desktop runtime is down (kit.loseCore())");
    return this.#core.end(sessionId, reason);
  }

  /**
   * Stops everything: running turns, deadlines, waits (they reject), the pages' ports (without telling them), and
   * puts back any global it installed. Call it after each test.
   *
   * @example
   * ```ts
   * let kit: PedelecTestKit;
   * beforeEach(() => (kit = createPedelecTestKit()));
   * afterEach(() => kit.dispose());
   * ```
   */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#agent.dispose();
    this.#core.dispose();
    this.#extension.dispose();
    this.#timers.dispose();
    for (const restore of this.#restoreGlobals.splice(0).reverse()) restore();
    // Lets what the pages already had in flight settle before the test goes on.
    await Promise.resolve();
  }

  #requireLive(): void {
    if (this.#disposed) throw new Error("the test kit was disposed");
  }
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
}
