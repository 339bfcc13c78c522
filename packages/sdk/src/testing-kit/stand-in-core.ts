// The desktop runtime (Core) behind the stand-in extension: creates sessions with Core's checks and defaults, finds
// them for their origin only, and serves the session requests a page's extension forwards.
import { PROVIDER_CODES, PROVIDER_NAMES, PROVIDER_REQUIRES_MODEL, type ProviderCode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { effortNotSupported, PROVIDER_EXPLICIT_EFFORTS } from "@pedelec/protocol/explicit-effort";
import {
  isPageRequestType,
  type ExtensionRequestType,
  type pageRequestSchemas,
  type PageRequestResult,
  type PageRequestType,
} from "@pedelec/protocol/page-wire";
import type { ProviderStatus, PublicSettings, SessionInfo } from "@pedelec/protocol/requests";
import { DEFAULT_RESOURCE_LIMITS, sessionLimitReached } from "@pedelec/protocol/resource-limits";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { z } from "zod";
import type { KitTimers } from "./kit-timers.js";
import type { KitTurn } from "./scripted-turn.js";
import { StandInSession } from "./stand-in-session.js";
import type { TestKitProviderState, TestKitToolCall } from "./types.js";

export interface StandInCoreConfig {
  providers: Partial<Record<ProviderCode, TestKitProviderState>>;
  settings: PublicSettings;
  fullAccess: boolean;
  prepareTurns: boolean;
  toolTimeoutMs: number;
  agentIdleTimeoutMs: number;
  timers: KitTimers;
  nextId: (prefix: string) => string;
  publish: (envelope: SessionEventEnvelope) => void;
  runAgent: (turn: KitTurn) => void;
  recordToolCall: (record: TestKitToolCall) => void;
  pageOf: (claimant: string) => string;
  followers: (sessionId: string) => number;
}

/** The requests the stand-in desktop serves: every page request but the extension's own. */
export type StandInCoreRequestType = Exclude<PageRequestType, ExtensionRequestType>;

/** A request's payload as the extension's check left it. */
type Payload<TType extends StandInCoreRequestType> = z.infer<(typeof pageRequestSchemas)[TType]["payload"]>;

/** What a request's answer carries besides its result: work that must follow the answer at once, in order. */
export interface CoreAnswer<TResult = unknown> {
  result: TResult;
  /** Kept events to send the asking page right after the answer (a resume's replay). */
  replay?: SessionEventEnvelope[];
  /** Starts what the request accepted (a turn), once the answer is on its way. */
  after?: () => void;
}

/**
 * One answer per request the stand-in desktop serves, keyed by the page request table: a request added to the
 * protocol does not compile until the stand-in answers it. `claimant` is the asking page's port.
 */
export type StandInCoreHandlers = {
  readonly [TType in StandInCoreRequestType]: (payload: Payload<TType>, origin: string, claimant: string) => CoreAnswer<PageRequestResult<TType>>;
};

export class StandInCore {
  readonly #config: StandInCoreConfig;
  readonly #sessions = new Map<string, StandInSession>();
  #up = true;

  constructor(config: StandInCoreConfig) {
    this.#config = config;
  }

  get up(): boolean {
    return this.#up;
  }

  get sessions(): StandInSession[] {
    return [...this.#sessions.values()];
  }

  session(sessionId: string): StandInSession | undefined {
    return this.#sessions.get(sessionId);
  }

  setProviders(providers: Partial<Record<ProviderCode, TestKitProviderState>>): void {
    this.#config.providers = { ...providers };
  }

  listProviders(): ProviderStatus[] {
    return PROVIDER_CODES.map((code) => {
      const problem = this.#providerProblem(code);
      return { code, name: PROVIDER_NAMES[code], available: problem === null, error: problem };
    });
  }

  /**
   * Serves one session request for `origin`, its payload as the extension's check of the page request table left it;
   * `claimant` is the asking page's port. Throws coded errors.
   */
  request(type: string, payload: unknown, origin: string, claimant: string): CoreAnswer {
    if (!this.#up) throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", "Pedelec Core is not running and could not be started");
    if (!isPageRequestType(type) || !Object.hasOwn(this.#handlers, type)) {
      throw new PedelecError("SDK_PROTOCOL_ERROR", `unknown request type "${type}"`);
    }
    return this.#serve(type as StandInCoreRequestType, payload as Payload<StandInCoreRequestType>, origin, claimant);
  }

  #serve<TType extends StandInCoreRequestType>(type: TType, payload: Payload<TType>, origin: string, claimant: string): CoreAnswer {
    const handler: StandInCoreHandlers[TType] = this.#handlers[type];
    return handler(payload, origin, claimant);
  }

  readonly #handlers: StandInCoreHandlers = {
    createSession: (payload, origin) => ({ result: this.#create(origin, payload) }),
    resumeSession: ({ sessionId, afterSeq }, origin) => {
      const session = this.#forOrigin(sessionId, origin);
      const info = session.info();
      const replay = afterSeq !== undefined && !session.ended ? session.eventsBetween(afterSeq, info.lastSeq) : [];
      return { result: info, replay };
    },
    sendText: ({ sessionId, turnId, text }, origin) => ({ result: { turnId }, after: this.#forOrigin(sessionId, origin).startTurn(turnId, text) }),
    prepareSession: ({ sessionId, turnId }, origin) => {
      const prepared = this.#forOrigin(sessionId, origin).prepare(turnId);
      return { result: { turnId: prepared.turnId }, ...(prepared.begin === undefined ? {} : { after: prepared.begin }) };
    },
    claimToolCall: ({ sessionId, toolRequestId }, origin, claimant) => ({
      result: { claimed: this.#forOrigin(sessionId, origin).claimToolCall(toolRequestId, claimant) },
    }),
    submitToolResult: ({ sessionId, toolRequestId, outcome }, origin, claimant) => {
      this.#forOrigin(sessionId, origin).submitToolResult(toolRequestId, outcome, claimant);
      return { result: { accepted: true } };
    },
    cancelTurn: ({ sessionId }, origin) => ({ result: { cancelled: this.#forOrigin(sessionId, origin).cancelTurn() } }),
    endSession: ({ sessionId }, origin) => ({ result: { ended: this.#forOrigin(sessionId, origin).end("requested") } }),
    listProviders: () => ({ result: this.listProviders() }),
    getSettings: () => ({ result: JSON.parse(JSON.stringify(this.#config.settings)) as PublicSettings }),
    runWorkspaceScript: ({ sessionId }, origin) => {
      this.#openForOrigin(sessionId, origin);
      throw new PedelecError(
        "DENO_UNAVAILABLE",
        'the test kit runs no scripts; answer runWorkspaceScript with kit.onRequest("runWorkspaceScript", …)',
      );
    },
    cancelWorkspaceRun: ({ sessionId }, origin) => {
      this.#forOrigin(sessionId, origin);
      return { result: { cancelled: false } };
    },
    listAssets: ({ sessionId }, origin) => {
      this.#openForOrigin(sessionId, origin);
      return { result: [] };
    },
    // The kit keeps no files: its workspaces are empty (answer with kit.onRequest("listWorkspaceEntries", …) for others).
    listWorkspaceEntries: ({ sessionId }, origin) => {
      this.#openForOrigin(sessionId, origin);
      return { result: { paths: [] } };
    },
    prepareAssetUpload: ({ sessionId }, origin) => {
      this.#openForOrigin(sessionId, origin);
      throw new PedelecError(
        "ASSET_UPLOAD_SERVER_UNAVAILABLE",
        'the test kit has no asset server; answer prepareAssetUpload with kit.onRequest("prepareAssetUpload", …)',
      );
    },
    prepareAssetDownload: ({ sessionId, path }, origin) => {
      this.#openForOrigin(sessionId, origin);
      throw new PedelecError("ASSET_NOT_FOUND", `no asset at ${path} (the test kit keeps no files; see kit.onRequest)`);
    },
  };

  /** A page went away: its claimed, unanswered tool calls are requested again in every session. */
  releaseToolClaims(claimant: string): void {
    if (!this.#up) return;
    for (const session of this.#sessions.values()) session.releaseToolClaims(claimant);
  }

  /** Ends a session for a reason the page cannot give (`disconnected`, `expired`, …). */
  end(sessionId: string, reason: "requested" | "disconnected" | "expired" | "full-access-revoked"): boolean {
    const session = this.#sessions.get(sessionId);
    if (session === undefined || !this.#up) return false;
    return session.end(reason);
  }

  lose(how: "killed" | "stopped"): void {
    if (!this.#up) return;
    // A clean stop still speaks: its sessions' failed turns go out before the link goes.
    for (const session of this.#sessions.values()) session.loseCore(how);
    this.#up = false;
  }

  restore(): void {
    if (this.#up) return;
    this.#up = true;
    for (const session of this.#sessions.values()) session.restoreCore();
  }

  dispose(): void {
    for (const session of this.#sessions.values()) session.dispose();
    this.#up = false;
  }

  #create(origin: string, input: Payload<"createSession">): SessionInfo {
    const { settings, fullAccess } = this.#config;
    let provider: ProviderCode;
    if (input.provider !== undefined) provider = input.provider;
    else if (settings.defaultProvider !== null) provider = settings.defaultProvider;
    else throw new PedelecError("DEFAULT_PROVIDER_NOT_SET", "no provider was given and no default provider is set in Pedelec");
    const model = input.model ?? settings.defaultModels[provider] ?? null;
    if (PROVIDER_REQUIRES_MODEL[provider] && model === null) {
      throw new PedelecError("MODEL_REQUIRED", `an ${provider} session needs a model (pass model, or set a default model for ${provider})`);
    }
    if (input.access === "full" && !fullAccess) {
      throw new PedelecError("FULL_ACCESS_NOT_GRANTED", `Full Access is not granted to ${origin}`);
    }
    if (input.effort !== undefined && !PROVIDER_EXPLICIT_EFFORTS[provider].includes(input.effort)) {
      throw effortNotSupported(provider, input.effort, PROVIDER_EXPLICIT_EFFORTS[provider]);
    }
    const problem = this.#providerProblem(provider);
    if (problem !== null) {
      throw new PedelecError(input.provider === undefined ? "DEFAULT_PROVIDER_UNAVAILABLE" : "PROVIDER_UNAVAILABLE", problem, {
        provider,
        executablePath: null,
      });
    }
    // Core's default limit; the kit's sessions are not stored, so every one not ended is live.
    const live = this.sessions.filter((session) => session.setup.origin === origin && !session.ended).length;
    if (live >= DEFAULT_RESOURCE_LIMITS.liveSessionsPerOrigin) throw sessionLimitReached(origin, DEFAULT_RESOURCE_LIMITS.liveSessionsPerOrigin, live);
    const sessionId = this.#config.nextId("session");
    const config = this.#config;
    const session = new StandInSession({
      sessionId,
      origin,
      provider,
      // Core's rule: an explicit effort takes the place of the effort profile.
      effortLevel: input.effort === undefined ? (input.effortLevel ?? settings.defaultEffortLevel) : null,
      effort: input.effort ?? null,
      model,
      workspace:
        input.workspace === undefined
          ? { path: `/pedelec-test-kit/workspaces/${sessionId}`, managed: true }
          : { path: input.workspace.path, managed: false },
      access: input.access ?? "sandbox",
      autoEndOnDisconnect: input.autoEndOnDisconnect ?? true,
      guidance: input.skills?.guidance ?? "",
      tools: input.skills?.tools ?? [],
      prepareTurns: config.prepareTurns,
      toolTimeoutMs: config.toolTimeoutMs,
      agentIdleTimeoutMs: config.agentIdleTimeoutMs,
      timers: config.timers,
      nextId: config.nextId,
      publish: config.publish,
      runAgent: config.runAgent,
      recordToolCall: config.recordToolCall,
      pageOf: config.pageOf,
      followers: () => config.followers(sessionId),
    });
    this.#sessions.set(sessionId, session);
    return session.info();
  }

  /** The session, if `origin` may use it; another origin's session gets the same answer as an unknown id. */
  #forOrigin(sessionId: string, origin: string): StandInSession {
    const session = this.#sessions.get(sessionId);
    if (session === undefined || session.setup.origin !== origin) {
      throw new PedelecError("THREAD_NOT_FOUND", `no session ${sessionId} for ${origin}`);
    }
    return session;
  }

  /** As #forOrigin, and refusing an ended session. */
  #openForOrigin(sessionId: string, origin: string): StandInSession {
    const session = this.#forOrigin(sessionId, origin);
    if (session.ended) throw new PedelecError("SESSION_ENDED", `session ${session.id} has ended`);
    return session;
  }

  #providerProblem(code: ProviderCode): string | null {
    const state = this.#config.providers[code];
    if (state === undefined || state === true) return null;
    if (state === false) return `${PROVIDER_NAMES[code]} is not installed (not found on PATH)`;
    return state;
  }
}
