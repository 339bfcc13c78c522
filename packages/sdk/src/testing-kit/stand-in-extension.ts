// The extension as the pages of a test kit meet it (packages/extension/src/page-gateway.ts): checks each request's
// shape and the origin's approval, asks the "user" when approval is pending (pausing the page's bridge timeout),
// forwards session requests to the stand-in desktop with the page's port as tool-call claimant, fans events out to the
// pages following each session (each page gets each seq once), and tells them when the desktop went away. Everything
// it sends is checked against the protocol's schemas first.
import { isAllowedPageOrigin } from "@pedelec/protocol/origin";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import {
  sdkPortProtocolVersion,
  extensionToPageMessageSchema,
  isPageRequestType,
  pageRequestSchema,
  pageRequestSchemas,
  requestIdSchema,
  type ExtensionToPageMessage,
  type PageResponse,
} from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { protocolVersionMismatch } from "@pedelec/protocol/protocol-mismatch";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import { sessionInfoSchema } from "@pedelec/protocol/requests";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { waitWithDeadline, type KitTimers } from "./kit-timers.js";
import type { CoreAnswer, StandInCore } from "./stand-in-core.js";
import { StandInPort, type StandInRuntime } from "./stand-in-port.js";
import type { TestKitApproval, TestKitRequest } from "./types.js";

/** Chrome's lastError text for a port to an extension that is not there. */
const ABSENT_EXTENSION_ERROR = "Could not establish connection. Receiving end does not exist.";

/** Answers one request type in place of the stand-in; throws a PedelecError for an error answer. */
export type RequestOverride = (payload: unknown, context: { origin: string; page: string }) => unknown;

class PageRoute {
  alive = true;
  /** The newest seq this page was sent, per session: no page gets an event twice. */
  readonly sentSeq = new Map<string, number>();

  constructor(
    readonly page: string,
    readonly origin: string,
    /** This port's name as a tool-call claimant; the page cannot choose it. */
    readonly claimant: string,
    readonly port: StandInPort,
  ) {}
}

interface ApprovalQuestion {
  readonly route: PageRoute;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export interface StandInExtensionConfig {
  approval: TestKitApproval;
  timers: KitTimers;
  waitTimeoutMs: number;
}

export class StandInExtension {
  /** Every request the pages sent, in order. */
  readonly requests: TestKitRequest[] = [];
  readonly #config: StandInExtensionConfig;
  #core: StandInCore | undefined;
  readonly #routes = new Set<PageRoute>();
  readonly #following = new Map<string, Set<PageRoute>>();
  readonly #pageOfClaimant = new Map<string, string>();
  readonly #questions = new Set<ApprovalQuestion>();
  readonly #overrides = new Map<string, RequestOverride>();
  readonly #requestListeners = new Set<() => void>();
  readonly #questionListeners = new Set<() => void>();
  /** Pages whose tab closed: a client left behind reaches no extension any more. */
  readonly #closedPages = new Set<string>();
  #portCount = 0;
  #disposed = false;

  constructor(config: StandInExtensionConfig) {
    this.#config = { ...config };
  }

  attachCore(core: StandInCore): void {
    this.#core = core;
  }

  get approval(): TestKitApproval {
    return this.#config.approval;
  }

  /** A `chrome.runtime` whose ports reach this extension as pages of `page`, from `origin`. */
  runtimeFor(page: string, origin: string): StandInRuntime {
    const runtime: StandInRuntime = {
      lastError: undefined,
      connect: (_extensionId: string, connectInfo: { name: string }) => {
        const port = new StandInPort(runtime);
        this.#accept(page, origin, port, connectInfo?.name);
        return port;
      },
    };
    return runtime;
  }

  /** The page a claimant (one of its ports) belongs to. */
  pageOf(claimant: string): string {
    return this.#pageOfClaimant.get(claimant) ?? claimant;
  }

  /** How many open pages follow a session. */
  followers(sessionId: string): number {
    return this.#following.get(sessionId)?.size ?? 0;
  }

  onRequest(type: string, override: RequestOverride): () => void {
    this.#overrides.set(type, override);
    return () => {
      if (this.#overrides.get(type) === override) this.#overrides.delete(type);
    };
  }

  setApproval(approval: TestKitApproval): void {
    this.#config.approval = approval;
    if (approval === "approved") {
      for (const question of [...this.#questions]) question.resolve();
    } else if (approval === "denied") {
      for (const question of [...this.#questions]) question.reject(rejected(question.route.origin));
    }
  }

  /** Resolves once the approval question is being asked (at once when it already is). */
  waitForApprovalPrompt(timeoutMs: number): Promise<void> {
    return waitWithDeadline<void>(
      this.#config.timers,
      timeoutMs,
      () => new Error(`kit.waitForApprovalPrompt(): no page asked for approval within ${timeoutMs} ms`),
      (resolve) => {
        if (this.#questions.size > 0) {
          resolve();
          return () => undefined;
        }
        const listener = (): void => resolve();
        this.#questionListeners.add(listener);
        return () => this.#questionListeners.delete(listener);
      },
    );
  }

  /** The `index`-th request of `type`, once a page sent it. */
  waitForRequest(type: string, index: number, timeoutMs: number): Promise<TestKitRequest> {
    return waitWithDeadline<TestKitRequest>(
      this.#config.timers,
      timeoutMs,
      () => new Error(`kit.waitForRequest(): no ${type} request #${index} within ${timeoutMs} ms`),
      (resolve) => {
        const look = (): void => {
          const found = this.requests.filter((request) => request.type === type)[index];
          if (found !== undefined) resolve(found);
        };
        this.#requestListeners.add(look);
        look();
        return () => this.#requestListeners.delete(look);
      },
    );
  }

  /** A session event from the desktop: to every open page following the session, each seq once. */
  routeEvent(envelope: SessionEventEnvelope): void {
    for (const route of this.#following.get(envelope.sessionId) ?? []) this.#sendEvent(route, envelope);
    if (envelope.event.type === "session-ended") this.#following.delete(envelope.sessionId);
  }

  /** The link to the desktop broke: every page following a session hears that its events may be lost. */
  interruptSessions(error: PedelecError): void {
    for (const [sessionId, routes] of this.#following) {
      for (const route of routes) this.#send(route, { type: "session-interrupted", sessionId, error: error.toWire() });
    }
  }

  /** The pages labelled `page` close (their tab went away). */
  closePage(page: string): void {
    this.#closedPages.add(page);
    for (const route of [...this.#routes]) {
      if (route.page === page) route.port.disconnect();
    }
  }

  dispose(): void {
    this.#disposed = true;
    for (const question of [...this.#questions]) question.reject(new PedelecError("APPROVAL_TIMEOUT", "the test kit was disposed"));
    for (const route of this.#routes) {
      route.alive = false;
      route.port.silence();
    }
    this.#routes.clear();
    this.#following.clear();
  }

  #accept(page: string, origin: string, port: StandInPort, name: string | undefined): void {
    if (this.#disposed || this.#closedPages.has(page)) {
      port.closeFromExtension(ABSENT_EXTENSION_ERROR);
      return;
    }
    const sdkVersion = name === undefined ? undefined : sdkPortProtocolVersion(name);
    if (sdkVersion === undefined) {
      port.closeFromExtension();
      return;
    }
    this.#portCount += 1;
    const route = new PageRoute(page, origin, `${page}/port-${this.#portCount}`, port);
    // As the extension does: a page whose SDK cannot talk to it gets the mismatch for every request, and nothing more.
    const mismatch = protocolVersionMismatch({ part: "extension", version: PROTOCOL_VERSION }, { part: "sdk", version: sdkVersion });
    if (mismatch !== undefined) {
      port.attach({
        receive: (message) => {
          const id = requestIdSchema.safeParse((message as { id?: unknown } | null)?.id);
          if (id.success) this.#send(route, failure(id.data, mismatch));
        },
        closedByPage: () => undefined,
      });
      return;
    }
    this.#pageOfClaimant.set(route.claimant, page);
    this.#routes.add(route);
    port.attach({
      receive: (message) => void this.#receive(route, message),
      closedByPage: () => this.#closedByPage(route),
    });
  }

  async #receive(route: PageRoute, raw: unknown): Promise<void> {
    const request = pageRequestSchema.safeParse(raw);
    if (!request.success) {
      const id = requestIdSchema.safeParse((raw as { id?: unknown } | null)?.id);
      const summary = summarizeIssues(request.error.issues);
      if (id.success) this.#send(route, failure(id.data, new PedelecError("SDK_PROTOCOL_ERROR", `malformed request: ${summary.message}`)));
      return;
    }
    const { id, type, payload } = request.data;
    this.requests.push({ type, payload, page: route.page });
    for (const listener of [...this.#requestListeners]) listener();
    let answer: CoreAnswer;
    try {
      answer = await this.#dispatch(route, id, type, payload);
      checkResult(type, answer.result, this.#overrides.has(type));
    } catch (error) {
      this.#send(route, failure(id, PedelecError.from(error, "SDK_TRANSPORT_ERROR")));
      return;
    }
    this.#send(route, { id, ok: true, result: answer.result });
    // What follows the answer goes out with nothing in between: the replay, then live events, then a turn's start.
    for (const envelope of answer.replay ?? []) this.#sendEvent(route, envelope);
    if (type === "createSession" || type === "resumeSession") this.#follow(route, answer.result);
    answer.after?.();
  }

  async #dispatch(route: PageRoute, id: string, type: string, payload: unknown): Promise<CoreAnswer> {
    const { origin } = route;
    if (!isAllowedPageOrigin(origin)) {
      throw new PedelecError("INVALID_ORIGIN", `${origin} may not use Pedelec (https, or http on localhost / 127.0.0.1)`, { origin });
    }
    if (!isPageRequestType(type)) throw new PedelecError("SDK_PROTOCOL_ERROR", `unknown request type "${type}"`);
    const parsed = pageRequestSchemas[type].payload.safeParse(payload);
    if (!parsed.success) {
      const summary = summarizeIssues(parsed.error.issues);
      throw new PedelecError("INVALID_INPUT", `invalid ${type} payload: ${summary.message}`, summary.details);
    }
    const core = this.#requireCore();
    if (type === "getApprovalStatus") {
      const override = this.#overrides.get(type);
      if (override !== undefined) return { result: await override(parsed.data, { origin, page: route.page }) };
      const approved = this.#config.approval === "approved";
      // The stand-in desktop is always running already: nothing had to be launched.
      return { result: { installed: true, approved, origin, appConnected: core.up, appLaunched: false } };
    }
    if (type === "createSession" || type === "resumeSession") await this.#askApproval(route, id);
    else if (this.#config.approval !== "approved") {
      throw new PedelecError("CREATE_SESSION_NOT_APPROVED", `${origin} is not approved; create or resume a session first`);
    }
    const override = this.#overrides.get(type);
    if (override === undefined) return core.request(type, parsed.data, origin, route.claimant);
    if (!core.up) throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", "Pedelec Core is not running and could not be started");
    return { result: await override(parsed.data, { origin, page: route.page }) };
  }

  /** Approved: nothing to ask. Pending: the page's request waits (its bridge timeout paused) for the user. */
  async #askApproval(route: PageRoute, id: string): Promise<void> {
    const { approval, timers, waitTimeoutMs } = this.#config;
    if (approval === "approved") return;
    if (approval === "denied") throw rejected(route.origin);
    this.#send(route, { type: "request-progress", id, stage: "awaiting-approval" });
    await waitWithDeadline<void>(
      timers,
      waitTimeoutMs,
      () =>
        new PedelecError(
          "APPROVAL_TIMEOUT",
          `no answer about the approval of ${route.origin} within ${waitTimeoutMs} ms (call kit.approve() or kit.deny())`,
        ),
      (resolve, reject) => {
        const question: ApprovalQuestion = { route, resolve, reject };
        this.#questions.add(question);
        for (const listener of [...this.#questionListeners]) listener();
        return () => this.#questions.delete(question);
      },
    );
    this.#send(route, { type: "request-progress", id, stage: "approval-settled" });
  }

  /** The page that created or resumed a session follows it; one that left meanwhile never will. */
  #follow(route: PageRoute, result: unknown): void {
    const info = sessionInfoSchema.parse(result);
    if (route.alive) {
      let routes = this.#following.get(info.sessionId);
      if (routes === undefined) {
        routes = new Set();
        this.#following.set(info.sessionId, routes);
      }
      routes.add(route);
      return;
    }
    if (info.autoEndOnDisconnect && this.followers(info.sessionId) === 0) this.#core?.end(info.sessionId, "disconnected");
  }

  /** A page went away: its claimed calls go to the others, and sessions nobody follows any more end (autoEnd). */
  #closedByPage(route: PageRoute): void {
    if (!route.alive) return;
    route.alive = false;
    this.#routes.delete(route);
    for (const question of [...this.#questions]) {
      if (question.route === route) question.reject(new PedelecError("APPROVAL_TIMEOUT", "the page went away"));
    }
    this.#core?.releaseToolClaims(route.claimant);
    for (const [sessionId, routes] of [...this.#following]) {
      if (!routes.delete(route) || routes.size > 0) continue;
      this.#following.delete(sessionId);
      if (this.#core?.session(sessionId)?.setup.autoEndOnDisconnect) this.#core.end(sessionId, "disconnected");
    }
  }

  #sendEvent(route: PageRoute, envelope: SessionEventEnvelope): void {
    const sent = route.sentSeq.get(envelope.sessionId) ?? 0;
    if (envelope.seq <= sent) return;
    route.sentSeq.set(envelope.sessionId, envelope.seq);
    this.#send(route, envelope);
  }

  #send(route: PageRoute, message: ExtensionToPageMessage): void {
    const parsed = extensionToPageMessageSchema.safeParse(message);
    if (!parsed.success) {
      throw new Error(`The test kit refused to send a message that breaks the protocol: ${summarizeIssues(parsed.error.issues).message}`);
    }
    if (route.alive) route.port.deliver(message);
  }

  #requireCore(): StandInCore {
    if (this.#core === undefined) throw new PedelecError("NATIVE_HOST_UNAVAILABLE", "the stand-in has no desktop runtime");
    return this.#core;
  }
}

/** Checks an answer against the protocol before it leaves, so the stand-in cannot drift from it. */
function checkResult(type: string, result: unknown, fromOverride: boolean): void {
  if (!isPageRequestType(type)) return;
  const parsed = pageRequestSchemas[type].result.safeParse(result);
  if (parsed.success) return;
  const { message, details } = summarizeIssues(parsed.error.issues);
  const source = fromOverride ? `the kit.onRequest("${type}") handler` : "the test kit";
  throw new PedelecError("SDK_PROTOCOL_ERROR", `${source} answered ${type} with a result that breaks the protocol: ${message}`, details);
}

function rejected(origin: string): PedelecError {
  return new PedelecError("APPROVAL_REJECTED", `the user rejected ${origin}`, { origin });
}

function failure(id: string, error: PedelecError): PageResponse {
  return { id, ok: false, error: error.toWire() };
}
