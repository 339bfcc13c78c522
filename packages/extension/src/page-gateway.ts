import { isAllowedPageOrigin } from "@pedelec/protocol/origin";
import {
  sdkPortProtocolVersion,
  isPageRequestType,
  pageRequestSchema,
  pageRequestSchemas,
  requestIdSchema,
  type ExtensionToPageMessage,
  type PageRequestResult,
  type PageResponse,
} from "@pedelec/protocol/page-wire";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { portTransport } from "@pedelec/protocol/port-transport";
import type { FullAccessClaim } from "@pedelec/protocol/full-access";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { protocolVersionMismatch } from "@pedelec/protocol/protocol-mismatch";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import { sessionInfoSchema, type SessionRequestType } from "@pedelec/protocol/requests";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { ApprovalBroker } from "./approval-broker.js";
import type { ApprovalStore } from "./approval-store.js";
import type { AutoEndEntry } from "./auto-end-ledger.js";
import type { FullAccessGrantStore } from "./full-access-grants.js";
import type { FullAccessRevocations } from "./full-access-revocations.js";
import type { InstanceIdStore } from "./instance-id.js";
import { consoleLogger, type Logger } from "./logger.js";
import type { NativeLink } from "./native-link.js";
import type { PagePort } from "./page-port.js";
import { PageRoute } from "./page-route.js";
import { RouteTable, type RoutedSession } from "./route-table.js";
import { randomBase64Url } from "./random-id.js";
import { resolveSenderOrigin } from "./sender-origin.js";
import type { WorkspaceConsentStore } from "./workspace-consent-store.js";
import { normalizeWorkspacePath } from "./workspace-path.js";

/** How long getApprovalStatus waits for the host to report Core's state when the link was not up yet. */
export const DEFAULT_STATUS_PROBE_TIMEOUT_MS = 1500;

export interface PageGatewayOptions {
  link: NativeLink;
  approvals: ApprovalBroker;
  approvedOrigins: ApprovalStore;
  /** The folders the user let each origin use as an explicit `workspace.path`. */
  consents: WorkspaceConsentStore;
  /** The origins the user granted Full Access in the options page. */
  grants: FullAccessGrantStore;
  /** Names this install in Full Access claims. */
  instanceId: InstanceIdStore;
  /** Revocations Core has not confirmed; they go ahead of every request. */
  revocations: FullAccessRevocations;
  logger?: Logger;
  /** Receives the routed auto-end sessions after every routing change (for the restart ledger). */
  onAutoEndSessionsChanged?: (entries: AutoEndEntry[]) => void;
  /** 0 answers getApprovalStatus from the current link state without opening it. */
  statusProbeTimeoutMs?: number;
}

/** Codes that mean a session is already gone, so there is nothing left to end or follow. */
const SESSION_GONE_CODES: ReadonlySet<string> = new Set(["THREAD_NOT_FOUND", "SESSION_ENDED"]);

/** Requests that only stop something; an undelivered revocation of the caller's origin does not hold them back. */
const STOPPING_REQUESTS: ReadonlySet<SessionRequestType> = new Set(["endSession", "cancelTurn", "cancelWorkspaceRun"]);
/** Page messages that take or answer a tool call; a route's claims are released only once these have reached Core. */
const TOOL_CALL_MESSAGES: ReadonlySet<unknown> = new Set<SessionRequestType>(["claimToolCall", "submitToolResult"]);

/**
 * The extension's side of the page wire: checks the caller's origin and approval, answers what it can itself,
 * forwards session requests to Core with the origin stamped, and fans Core's events out to subscribed pages.
 */
export class PageGateway {
  readonly #routes = new RouteTable<PageRoute>();
  /** The newest seq routed for each followed session: a reconnect asks Core for what came after it. */
  readonly #routedSeq = new Map<string, number>();
  /** Each page route's name as a tool-call claimant; set on the route's first claim, released when it disconnects. */
  readonly #claimants = new WeakMap<PageRoute, string>();
  /** The newest seq each route was sent per session, so no route gets an event twice. */
  readonly #sentSeq = new WeakMap<PageRoute, Map<string, number>>();
  readonly #logger: Logger;
  readonly #statusProbeTimeoutMs: number;

  constructor(private readonly options: PageGatewayOptions) {
    this.#logger = options.logger ?? consoleLogger;
    this.#statusProbeTimeoutMs = options.statusProbeTimeoutMs ?? DEFAULT_STATUS_PROBE_TIMEOUT_MS;
    options.link.onEvent((envelope) => this.#routeEvent(envelope));
    options.link.onReopen(() => this.#resubscribe());
    options.link.onLinkLost((error) => this.#interruptSessions(error));
  }

  /**
   * Takes a port from `runtime.onConnectExternal`. Ports with another name are not ours and are closed. The name states
   * the page's SDK protocol version: a page that cannot talk to this extension gets PROTOCOL_VERSION_MISMATCH for every
   * request, and nothing it sends goes further.
   */
  accept(port: PagePort): void {
    const sdkVersion = sdkPortProtocolVersion(port.name);
    if (sdkVersion === undefined) {
      port.disconnect();
      return;
    }
    const transport = portTransport<unknown, ExtensionToPageMessage>(port);
    const route = new PageRoute(transport, resolveSenderOrigin(port.sender));
    const mismatch = protocolVersionMismatch({ part: "extension", version: PROTOCOL_VERSION }, { part: "sdk", version: sdkVersion });
    if (mismatch !== undefined) {
      this.#logger.warn("PROTOCOL_VERSION_MISMATCH", "refused a page whose SDK speaks another protocol version", {
        origin: route.origin,
        details: mismatch.details,
      });
      transport.onMessage((message) => {
        const id = requestIdSchema.safeParse((message as { id?: unknown } | null)?.id);
        if (id.success) route.send(failure(id.data, mismatch));
      });
      return;
    }
    const toolMessages = new Set<Promise<void>>();
    transport.onMessage((message) => {
      let markSent: () => void = () => undefined;
      const sent = new Promise<void>((resolve) => (markSent = resolve));
      // Settled once the request is on the link to Core, or once it is answered without reaching it.
      void this.#handleMessage(route, message, markSent).finally(markSent);
      if (!TOOL_CALL_MESSAGES.has((message as { type?: unknown } | null)?.type)) return;
      toolMessages.add(sent);
      void sent.then(() => toolMessages.delete(sent));
    });
    transport.onClose(() => this.#handleDisconnect(route, toolMessages));
    void this.#warmLinkFor(route.origin);
  }

  /**
   * A page of an approved site connected, so it is about to ask for the agent: the desktop link opens now, and the host
   * starts Core while the page loads, instead of after its first request. Other sites start nothing on this machine.
   */
  async #warmLinkFor(origin: string | undefined): Promise<void> {
    if (origin === undefined || this.options.link.state !== "closed") return;
    if (!(await this.options.approvedOrigins.isApproved(origin).catch(() => false))) return;
    await this.options.link.probe(this.#statusProbeTimeoutMs);
  }

  /** Ends sessions a previous worker routed with autoEnd and lost on restart, unless a page picked them up again. */
  async endOrphans(entries: readonly AutoEndEntry[]): Promise<void> {
    const orphans = entries.filter((entry) => !this.#routes.has(entry.sessionId));
    await Promise.all(orphans.map((entry) => this.#endSession(entry, { quietWhenGone: true })));
  }

  /** `onSent`: called once the request is on the link to Core (not for requests the extension answers itself). */
  async #handleMessage(route: PageRoute, raw: unknown, onSent?: () => void): Promise<void> {
    const request = pageRequestSchema.safeParse(raw);
    if (!request.success) {
      const id = requestIdSchema.safeParse((raw as { id?: unknown } | null)?.id);
      const summary = summarizeIssues(request.error.issues);
      const error = new PedelecError("SDK_PROTOCOL_ERROR", `malformed request: ${summary.message}`, summary.details);
      if (id.success) route.send(failure(id.data, error));
      else this.#logger.warn("SDK_PROTOCOL_ERROR", "dropped a page message without a usable request id", summary.details);
      return;
    }
    const { id, type, payload } = request.data;
    let response: PageResponse;
    try {
      response = { id, ok: true, result: await this.#dispatch(route, id, type, payload, onSent) };
    } catch (error) {
      response = failure(id, PedelecError.from(error, "SDK_TRANSPORT_ERROR"));
    }
    route.send(response);
  }

  async #dispatch(route: PageRoute, id: string, type: string, payload: unknown, onSent?: () => void): Promise<unknown> {
    const origin = route.origin;
    if (origin === undefined) {
      throw new PedelecError("SDK_ORIGIN_UNAVAILABLE", "the browser did not report the calling page's origin");
    }
    if (!isAllowedPageOrigin(origin)) {
      throw new PedelecError("INVALID_ORIGIN", `${origin} may not use Pedelec (https, or http on localhost / 127.0.0.1)`, {
        origin,
      });
    }
    if (!isPageRequestType(type)) {
      throw new PedelecError("SDK_PROTOCOL_ERROR", `unknown request type "${type}"`);
    }
    const parsed = pageRequestSchemas[type].payload.safeParse(payload);
    if (!parsed.success) {
      const summary = summarizeIssues(parsed.error.issues);
      throw new PedelecError("INVALID_INPUT", `invalid ${type} payload: ${summary.message}`, summary.details);
    }
    switch (type) {
      case "getApprovalStatus":
        return this.#approvalStatus(origin, route.signal);
      case "createSession":
      case "resumeSession":
        return this.#openSession(route, id, type, origin, parsed.data);
      default: {
        if (!(await this.options.approvedOrigins.isApproved(origin))) {
          throw new PedelecError("CREATE_SESSION_NOT_APPROVED", `${origin} is not approved; create or resume a session first`);
        }
        // The claimant is the route, never something the page says: one tab cannot answer for another.
        const claims = TOOL_CALL_MESSAGES.has(type);
        const forwarded = claims ? { ...parsed.data, claimant: this.#claimantOf(route) } : parsed.data;
        // A claim or result the page sent is delivered even if the page goes away meanwhile (a reload as the handler
        // returns): its claims are released after it (see #handleDisconnect), never before.
        return this.#forward(type, origin, forwarded, claims ? undefined : route.signal, onSent);
      }
    }
  }

  /**
   * Sends one request to Core for `origin`. Stored revocations travel first. A request asking for Full Access needs
   * the origin's grant (FULL_ACCESS_NOT_GRANTED otherwise, before anything reaches the native host) and carries the
   * claim the native host attests; the page can neither supply nor change that claim.
   */
  async #forward(type: SessionRequestType, origin: string, payload: unknown, signal?: AbortSignal, onSent?: () => void): Promise<unknown> {
    const fullAccess = asksForFullAccess(type, payload);
    if (fullAccess) await this.#requireGrant(origin);
    await this.options.revocations.beforeRequest(origin, { proceedOnFailure: STOPPING_REQUESTS.has(type) });
    // Read again after the revocations went out: a grant revoked meanwhile must not be claimed.
    const claim = fullAccess ? await this.#claimFor(origin) : undefined;
    const answer = this.options.link.request(type, origin, payload, signal, claim);
    onSent?.();
    return answer;
  }

  async #requireGrant(origin: string): Promise<void> {
    if (!(await this.options.grants.grantFor(origin))) throw fullAccessNotGranted(origin);
  }

  async #claimFor(origin: string): Promise<FullAccessClaim> {
    const grant = await this.options.grants.grantFor(origin);
    const approvalGrantedAt = await this.options.approvedOrigins.approvedAt(origin);
    if (grant === undefined || approvalGrantedAt === undefined) throw fullAccessNotGranted(origin);
    return {
      instanceId: await this.options.instanceId.get(),
      approvalGrantedAt,
      fullAccessGrantId: grant.grantId,
      fullAccessGrantedAt: grant.grantedAt,
    };
  }

  async #approvalStatus(origin: string, signal: AbortSignal): Promise<PageRequestResult<"getApprovalStatus">> {
    const approved = await this.options.approvedOrigins.isApproved(origin);
    // Only an approved origin may make the extension start the native host just to ask.
    if (approved && !this.options.link.appConnected && this.#statusProbeTimeoutMs > 0) {
      await this.options.link.probe(this.#statusProbeTimeoutMs, signal);
    }
    const { appConnected, coreLaunched } = this.options.link;
    return { installed: true, approved, origin, appConnected, appLaunched: coreLaunched };
  }

  async #openSession(route: PageRoute, id: string, type: "createSession" | "resumeSession", origin: string, payload: unknown): Promise<unknown> {
    // A folder is checked before anything is asked: a refused path never opens the approval window.
    const folder = type === "createSession" ? requestedFolder(payload) : undefined;
    // Full Access is granted only in the options page, and only to approved origins: no question can lead to it.
    if (asksForFullAccess(type, payload)) await this.#requireGrant(origin);
    const needsApproval = !(await this.options.approvedOrigins.isApproved(origin));
    // A folder consent outliving its origin's approval (storage edited by hand) is not trusted: ask again.
    const needsConsent = folder !== undefined && (needsApproval || !(await this.options.consents.isAllowed(origin, folder)));
    if (needsApproval || needsConsent) {
      // One pause of the page's bridge timeout covers both questions.
      route.send({ type: "request-progress", id, stage: "awaiting-approval" });
      if (needsApproval) await this.options.approvals.waitForApproval(origin, route.signal);
      if (needsConsent) await this.options.approvals.waitForWorkspaceConsent(origin, folder, route.signal);
      route.send({ type: "request-progress", id, stage: "approval-settled" });
    }
    const forwarded = folder === undefined ? payload : withFolder(payload, folder);
    // No abort signal here: once Core creates the session its answer must arrive, or the session could not be ended.
    const result = await this.#forward(type, origin, forwarded);
    const info = sessionInfoSchema.safeParse(result);
    if (!info.success) {
      const summary = summarizeIssues(info.error.issues);
      throw new PedelecError("SDK_PROTOCOL_ERROR", `Core answered ${type} with an invalid session: ${summary.message}`, summary.details);
    }
    const session: RoutedSession = {
      sessionId: info.data.sessionId,
      origin,
      autoEndOnDisconnect: info.data.autoEndOnDisconnect,
    };
    if (route.alive) {
      this.#routes.subscribe(route, session);
      this.#noteSeq(session.sessionId, info.data.lastSeq);
      this.#autoEndSessionsChanged();
    } else if (session.autoEndOnDisconnect && !this.#routes.has(session.sessionId)) {
      // The page left while Core was answering; nobody will ever see this session.
      void this.#endSession(session);
    }
    return result;
  }

  #routeEvent(envelope: SessionEventEnvelope): void {
    for (const route of this.#routes.routesFor(envelope.sessionId)) {
      // Core may replay events a route already has (the extension's resubscribe and a page's resume both ask for them).
      let sent = this.#sentSeq.get(route);
      if (sent === undefined) {
        sent = new Map();
        this.#sentSeq.set(route, sent);
      }
      if (envelope.seq <= (sent.get(envelope.sessionId) ?? 0)) continue;
      sent.set(envelope.sessionId, envelope.seq);
      route.send(envelope);
    }
    if (this.#routes.has(envelope.sessionId)) this.#noteSeq(envelope.sessionId, envelope.seq);
    if (envelope.event.type === "session-ended" && this.#routes.dropSession(envelope.sessionId)) {
      this.#routedSeq.delete(envelope.sessionId);
      this.#autoEndSessionsChanged();
    }
  }

  #noteSeq(sessionId: string, seq: number): void {
    this.#routedSeq.set(sessionId, Math.max(seq, this.#routedSeq.get(sessionId) ?? 0));
  }

  #claimantOf(route: PageRoute): string {
    let claimant = this.#claimants.get(route);
    if (claimant === undefined) {
      claimant = randomBase64Url(16);
      this.#claimants.set(route, claimant);
    }
    return claimant;
  }

  /** The page left: tool calls it claimed and did not answer are requested again for the pages still following. */
  #releaseClaims(route: PageRoute): void {
    const claimant = this.#claimants.get(route);
    if (claimant === undefined || route.origin === undefined) return;
    this.options.link.request("releaseToolClaims", route.origin, { claimant }).catch((error: unknown) => {
      // A lost link releases every claim of the connection on Core's side anyway.
      const failure = PedelecError.from(error, "SDK_TRANSPORT_ERROR");
      this.#logger.warn(failure.code, "could not release a closed page's tool calls", failure.toWire());
    });
  }

  /**
   * `toolMessages`: the route's claims and results not yet on the link to Core. Its claims are released only after
   * them (the link keeps order): a result the page sent just before it went away (a reload as the handler returns) must
   * reach Core before the call is handed to another page, or a second handler would run it.
   */
  #handleDisconnect(route: PageRoute, toolMessages: ReadonlySet<Promise<void>>): void {
    route.close();
    if (toolMessages.size === 0) this.#releaseClaims(route);
    else void Promise.allSettled([...toolMessages]).then(() => this.#releaseClaims(route));
    const orphaned = this.#routes.removeRoute(route);
    for (const session of orphaned) {
      if (session.autoEndOnDisconnect) void this.#endSession(session);
    }
    if (orphaned.length > 0) this.#autoEndSessionsChanged();
  }

  /** Tells every page following a session that its events may be lost, so no turn waits on them forever. */
  #interruptSessions(error: PedelecError): void {
    for (const session of this.#routes.sessions()) {
      for (const route of this.#routes.routesFor(session.sessionId)) {
        route.send({ type: "session-interrupted", sessionId: session.sessionId, error: error.toWire() });
      }
    }
  }

  /**
   * A new native connection knows no subscriptions; ask Core again for every session pages still follow, with the
   * events routed since the last one seen (a restarted Core replays them, such as the turn it had to fail).
   */
  #resubscribe(): void {
    for (const session of this.#routes.sessions()) {
      const afterSeq = this.#routedSeq.get(session.sessionId);
      this.options.link
        .request("subscribeSession", session.origin, { sessionId: session.sessionId, ...(afterSeq === undefined ? {} : { afterSeq }) })
        .catch((error: unknown) => {
          const failure = PedelecError.from(error, "SDK_TRANSPORT_ERROR");
          this.#logger.warn(failure.code, `could not resubscribe to session ${session.sessionId}`, failure.toWire());
          if (SESSION_GONE_CODES.has(failure.code) && this.#routes.dropSession(session.sessionId)) {
            this.#routedSeq.delete(session.sessionId);
            this.#autoEndSessionsChanged();
          }
        });
    }
  }

  /** Ends a session no page follows any more (`autoEndOnDisconnect`). */
  async #endSession(session: AutoEndEntry, options: { quietWhenGone?: boolean } = {}): Promise<void> {
    try {
      await this.#forward("endSession", session.origin, { sessionId: session.sessionId, reason: "disconnected" });
    } catch (error) {
      const failure = PedelecError.from(error, "END_SESSION_FAILED");
      if (options.quietWhenGone && SESSION_GONE_CODES.has(failure.code)) return;
      this.#logger.warn("AUTO_END_SESSION_FAILED", `could not end session ${session.sessionId}`, failure.toWire());
    }
  }

  #autoEndSessionsChanged(): void {
    const entries = this.#routes
      .sessions()
      .filter((session) => session.autoEndOnDisconnect)
      .map(({ sessionId, origin }) => ({ sessionId, origin }));
    this.options.onAutoEndSessionsChanged?.(entries);
  }
}

/** The normalized explicit workspace folder of a createSession payload (already schema-checked), if it names one. */
function requestedFolder(payload: unknown): string | undefined {
  const path = (payload as { workspace?: { path?: unknown } }).workspace?.path;
  return typeof path === "string" ? normalizeWorkspacePath(path) : undefined;
}

/** True for the requests that ask for Full Access: createSession and runWorkspaceScript with `access: "full"`. */
function asksForFullAccess(type: SessionRequestType, payload: unknown): boolean {
  if (type !== "createSession" && type !== "runWorkspaceScript") return false;
  return (payload as { access?: unknown }).access === "full";
}

function fullAccessNotGranted(origin: string): PedelecError {
  return new PedelecError(
    "FULL_ACCESS_NOT_GRANTED",
    `${origin} does not have Full Access; the user can grant it in the Pedelec extension's options`,
    { origin },
  );
}

/** Core gets the folder in the spelling the user consented to. */
function withFolder(payload: unknown, folder: string): unknown {
  const request = payload as { workspace: object };
  return { ...request, workspace: { ...request.workspace, path: folder } };
}

function failure(id: string, error: PedelecError): PageResponse {
  return { id, ok: false, error: error.toWire() };
}
