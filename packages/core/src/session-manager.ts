import { randomUUID } from "node:crypto";
import type { ProviderCode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { CreateSessionInput, ProviderStatus, PublicSettings, SessionInfo } from "@pedelec/protocol/requests";
import type { SessionEndReason, SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { sessionLimitReached } from "@pedelec/protocol/resource-limits";
import { isBusySessionStatus } from "@pedelec/protocol/session-transitions";
import type { ToolManifestEntry } from "@pedelec/protocol/tool-schema";
import type { CorePaths } from "./core-paths.js";
import { DEFAULT_ENDED_SESSION_LIMITS, EndedSession, EndedSessions, type EndedSessionLimits } from "./ended-session.js";
import { log } from "./logger.js";
import { ProviderLocator } from "./provider-locator.js";
import { ProviderProbeCache } from "./provider-probe-cache.js";
import { warmProviders } from "./provider-warmup.js";
import { LoginShellPath } from "./providers/login-shell-path.js";
import { reportProviders, type ProviderReport } from "./provider-status.js";
import type { ProcessGroupLedger } from "./process-group-ledger.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { Session, type RestoredSessionState } from "./session.js";
import { chooseSessionSetup } from "./session-choice.js";
import { restoreStoredSessions, type RestoreReport } from "./session-restore.js";
import type { SessionStore, StoredSession } from "./session-store/session-store.js";
import { endedInfoOf, storedPatchFor } from "./stored-session-view.js";
import type { ScriptRunner } from "@pedelec/script-runtime/script-runner";
import type { Settings } from "./settings.js";
import { capabilityMatches, issueThreadCapability } from "./thread-capability.js";
import { ToolRegistry } from "./tool-registry.js";
import { prepareExplicitWorkspace, prepareManagedWorkspace, removeManagedWorkspace, type PreparedWorkspace } from "./workspace.js";

export interface SessionManagerOptions {
  paths: CorePaths;
  loadSettings: () => Promise<Settings>;
  providers: ProviderRegistry;
  env: NodeJS.ProcessEnv;
  processLedger: ProcessGroupLedger;
  scriptRunner: () => Promise<ScriptRunner>;
  publish: (envelope: SessionEventEnvelope) => void;
  /**
   * Where sessions and their events are kept across Core restarts, or why it could not be opened: then every session
   * request is refused with that error (SESSION_STORE_FAILED) rather than running sessions that would not survive.
   * Core opens it after it starts listening (see restore()); until then it is absent.
   */
  store?: SessionStore | PedelecError;
  /** How many ended sessions are remembered, and for how long (DEFAULT_ENDED_SESSION_LIMITS). */
  endedSessionLimits?: Partial<EndedSessionLimits>;
  /** The clock ended sessions age by. */
  now?: () => number;
}

/** A session as a page reaches it: running, or what is kept of it once it ended. */
export type PageSession = Session | EndedSession;

const DAY_MS = 24 * 60 * 60_000;

/**
 * A stored provider conversation no open session names is swept only once it is this old: a turn that has just started
 * one may not have reported its id yet. Longer than pedelec-agent's longest turn (30 min).
 */
const CONVERSATION_SWEEP_GRACE_MS = 60 * 60_000;

/** A live session as the control panel lists it: what its page sees, plus its origin and how many turns it ran. */
export interface LiveSessionSummary {
  origin: string;
  info: SessionInfo;
  /** Turns the page started (prepare turns not counted), as far as the store's kept events and this Core tell. */
  turnCount: number;
}

/** An origin that created sessions, with how many of them are live and how many ended ones the store keeps. */
export interface OriginSessionCount {
  origin: string;
  live: number;
  ended: number;
}

/** What start-up found in the store (see restore()). */
export type { RestoreReport } from "./session-restore.js";

/** Creates sessions and finds them again, enforcing that a session belongs to the origin that made it. */
export class SessionManager {
  /** Sessions that have not ended yet; an ended one moves to #ended and its workspace, if managed, is removed. */
  readonly #sessions = new Map<string, Session>();
  readonly #ended: EndedSessions;
  readonly #workspaceRemovals = new Set<Promise<void>>();
  readonly #now: () => number;
  readonly #locator: ProviderLocator;
  readonly #loginShellPath: LoginShellPath;
  /** Last event or resume time of each live session (ms), for the retention setting. */
  readonly #lastActivity = new Map<string, number>();
  /** Control panel observers of every session's events (observeEvents). */
  readonly #observers = new Set<(envelope: SessionEventEnvelope, origin: string, provider: ProviderCode) => void>();
  /** User turns per live session, counted once asked for (liveSessions) and kept up to date from then on. */
  readonly #turnCounts = new Map<string, number>();
  /** Sessions of each origin being created right now (see #reserveSessionSlot). */
  readonly #creating = new Map<string, number>();
  #store: SessionStore | PedelecError;

  constructor(private readonly options: SessionManagerOptions) {
    this.#now = options.now ?? Date.now;
    this.#store = options.store ?? new PedelecError("SESSION_STORE_FAILED", "the session store is not open yet");
    this.#ended = new EndedSessions({ ...DEFAULT_ENDED_SESSION_LIMITS, ...options.endedSessionLimits }, this.#now);
    this.#loginShellPath = new LoginShellPath(options.env);
    this.#locator = new ProviderLocator(
      options.providers,
      options.env,
      this.#loginShellPath,
      Date.now,
      new ProviderProbeCache(options.paths.providerProbeCacheFile),
    );
  }

  /**
   * Starts, in the background, what a first createSession waits for (the login shell's PATH, the likely provider's
   * probe, Ajv): see provider-warmup.ts.
   */
  warmUp(): void {
    void warmProviders(this.#locator, this.options);
  }

  /** Sessions held whole (not yet ended, or ending) and sessions remembered as ended. */
  get counts(): { live: number; ended: number } {
    return { live: this.#sessions.size, ended: this.#ended.size };
  }

  /** Resolves once the managed workspaces and stored conversations of sessions ended so far have been removed. */
  async workspacesRemoved(): Promise<void> {
    while (this.#workspaceRemovals.size > 0) await Promise.all(this.#workspaceRemovals);
  }

  get activeCount(): number {
    let count = 0;
    for (const session of this.#sessions.values()) if (!session.ended) count += 1;
    return count;
  }

  /**
   * `fullAccessAdmitted` is true only when the request carried a native host attestation Core verified; a page's
   * `access: "full"` alone is refused.
   */
  async create(origin: string, input: CreateSessionInput, fullAccessAdmitted = false): Promise<SessionInfo> {
    const settings = await this.options.loadSettings();
    const release = this.#reserveSessionSlot(origin, settings.limits.liveSessionsPerOrigin);
    try {
      return await this.#create(origin, input, fullAccessAdmitted, settings);
    } finally {
      release();
    }
  }

  /** Live sessions of `origin`, counting those being created. */
  liveCountOf(origin: string): number {
    let count = this.#creating.get(origin) ?? 0;
    for (const session of this.#sessions.values()) if (!session.ended && session.origin === origin) count += 1;
    return count;
  }

  /** The workspaces of `origin`'s live sessions (one entry per folder, however many sessions share it). */
  liveWorkspacesOf(origin: string): string[] {
    const paths = new Set<string>();
    for (const session of this.#sessions.values()) if (!session.ended && session.origin === origin) paths.add(session.setup.workspace.path);
    return [...paths];
  }

  /**
   * Holds one of `origin`'s live-session slots while its session is created, so that creates racing each other cannot
   * all pass the limit; SESSION_LIMIT_REACHED when none is left. The returned function gives the hold back (a created
   * session is counted as live from then on).
   */
  #reserveSessionSlot(origin: string, limit: number): () => void {
    const used = this.liveCountOf(origin);
    if (used >= limit) throw sessionLimitReached(origin, limit, used);
    this.#creating.set(origin, (this.#creating.get(origin) ?? 0) + 1);
    return () => {
      const left = (this.#creating.get(origin) ?? 1) - 1;
      if (left === 0) this.#creating.delete(origin);
      else this.#creating.set(origin, left);
    };
  }

  async #create(origin: string, input: CreateSessionInput, fullAccessAdmitted: boolean, settings: Settings): Promise<SessionInfo> {
    const { provider, model, effortLevel, effort, effortArgv, executablePath, providerOptions } = await chooseSessionSetup(input, settings, {
      origin,
      fullAccessAdmitted,
      providers: this.options.providers,
      locator: this.#locator,
      env: this.options.env,
    });
    const store = this.#requireStore();
    const toolManifest: ToolManifestEntry[] = input.skills?.tools ?? [];
    const tools = new ToolRegistry(toolManifest);
    const sessionId = randomUUID();
    const workspace: PreparedWorkspace = input.workspace
      ? await prepareExplicitWorkspace(input.workspace.path, {
          pedelecHome: this.options.paths.home,
          workspacesDir: this.options.paths.workspacesDir,
          userHome: this.options.env.HOME,
        })
      : await prepareManagedWorkspace(this.options.paths.workspacesDir, sessionId);
    const record: StoredSession = {
      sessionId,
      origin,
      provider,
      model,
      effortLevel,
      effort,
      effortArgv: [...effortArgv],
      access: input.access ?? "sandbox",
      autoEndOnDisconnect: input.autoEndOnDisconnect ?? true,
      workspace: { path: workspace.path, managed: workspace.managed },
      guidance: input.skills?.guidance ?? "",
      tools: toolManifest,
      executablePath,
      providerSessionId: null,
      status: "idle",
      activeTurn: null,
      usage: {},
      createdAt: new Date(this.#now()).toISOString(),
      lastActivityAt: new Date(this.#now()).toISOString(),
      endedAt: null,
      endReason: null,
      lastSeq: 0,
    };
    try {
      store.insertSession(record);
    } catch (error) {
      await removeManagedWorkspace(this.options.paths.workspacesDir, workspace).catch(() => undefined);
      throw PedelecError.from(error, "SESSION_STORE_FAILED");
    }
    const session = await this.#buildSession(record, tools, settings, providerOptions);
    return session.info();
  }

  /**
   * Rebuilds the sessions an earlier Core left open: each is resumable again with its provider conversation, a turn that
   * was running ends with SESSION_ERROR, and sessions unused past the retention setting end. Run once, before serving.
   */
  async restore(store: SessionStore | PedelecError | undefined = this.options.store): Promise<RestoreReport> {
    if (store === undefined) return { restored: 0, interrupted: 0, expired: 0 };
    this.#store = store;
    if (store instanceof PedelecError) return { restored: 0, interrupted: 0, expired: 0 };
    const settings = await this.options.loadSettings();
    return restoreStoredSessions(store, this.#now() - settings.sessionRetentionDays * DAY_MS, {
      rememberEnded: (record) => {
        const endedAt = Date.parse(record.endedAt ?? record.lastActivityAt);
        this.#ended.add(new EndedSession(record.origin, endedInfoOf(record), issueThreadCapability().digest, endedAt));
      },
      endExpired: (record) => this.#endStored(store, record, "expired"),
      rebuild: async (record, restored) => {
        // Taken from the settings in force now, as at creation, but not checked: the next turn says what is wrong.
        const providerOptions = this.options.providers.get(record.provider)?.sessionOptions?.read(settings);
        return this.#buildSession(record, new ToolRegistry(record.tools), settings, providerOptions, restored);
      },
    });
  }

  /** Managed workspaces of sessions that are still resumable; everything else under the managed root is left over. */
  liveManagedWorkspaces(): Set<string> {
    const paths = new Set<string>();
    for (const session of this.#sessions.values()) {
      if (session.setup.workspace.managed) paths.add(session.setup.workspace.path);
    }
    return paths;
  }

  /**
   * Ends sessions unused for longer than the retention setting and forgets old ended ones. Core runs it at start and
   * then periodically.
   */
  async sweepExpired(): Promise<number> {
    const store = this.#store;
    if (store instanceof PedelecError) return 0;
    const settings = await this.options.loadSettings();
    const expiredBefore = this.#now() - settings.sessionRetentionDays * DAY_MS;
    const ending: Promise<boolean>[] = [];
    for (const session of this.#sessions.values()) {
      if (session.ended || isBusySessionStatus(session.status)) continue;
      if ((this.#lastActivity.get(session.id) ?? this.#now()) < expiredBefore) ending.push(session.end("expired"));
    }
    const expired = (await Promise.all(ending)).filter(Boolean).length;
    const { maxCount, maxAgeMs } = { ...DEFAULT_ENDED_SESSION_LIMITS, ...this.options.endedSessionLimits };
    try {
      store.pruneEnded(maxCount, new Date(this.#now() - maxAgeMs).toISOString());
    } catch (error) {
      log("warn", "could not prune ended sessions from the store", { error: String(error) });
    }
    await this.workspacesRemoved();
    await this.#sweepConversations(store);
    return expired;
  }

  /**
   * Removes the stored provider conversations no open session names (left by a session that ended before Core could
   * remove them, or by a crash), sparing ones written in the last CONVERSATION_SWEEP_GRACE_MS.
   */
  async #sweepConversations(store: SessionStore): Promise<void> {
    let keep: Set<string>;
    try {
      keep = new Set(store.listOpen().flatMap((record) => (record.providerSessionId === null ? [] : [record.providerSessionId])));
    } catch (error) {
      log("warn", "could not list open sessions to sweep stored conversations", { error: String(error) });
      return;
    }
    for (const code of this.options.providers.supportedCodes()) {
      const conversations = this.options.providers.get(code)?.storedConversations;
      if (conversations === undefined) continue;
      try {
        const removed = await conversations.sweep(this.options.paths.home, keep, this.#now() - CONVERSATION_SWEEP_GRACE_MS);
        if (removed > 0) log("info", "removed stored conversations no session owns", { provider: code, count: removed });
      } catch (error) {
        log("warn", "could not sweep stored conversations", { provider: code, error: String(error) });
      }
    }
  }

  /**
   * The events of `session` newer than `afterSeq` that the store still keeps, in order (the newest few thousand per
   * session), for a page that resumes after missing them.
   */
  eventsAfter(sessionId: string, afterSeq: number): SessionEventEnvelope[] {
    const store = this.#requireStore();
    this.#touch(sessionId);
    return store.eventsAfter(sessionId, afterSeq);
  }

  async #buildSession(
    record: StoredSession,
    tools: ToolRegistry,
    settings: Settings,
    providerOptions: unknown,
    restored?: RestoredSessionState,
  ): Promise<Session> {
    const adapter = this.options.providers.get(record.provider);
    if (adapter === undefined) throw new PedelecError("PROVIDER_UNAVAILABLE", `Pedelec cannot drive ${record.provider}`);
    const store = this.#requireStore();
    const session: Session = new Session({
      id: record.sessionId,
      origin: record.origin,
      provider: record.provider,
      adapter,
      executablePath: record.executablePath,
      effortLevel: record.effortLevel,
      effort: record.effort,
      effortArgv: record.effortArgv,
      model: record.model,
      guidance: record.guidance,
      tools,
      workspace: record.workspace,
      access: record.access,
      autoEndOnDisconnect: record.autoEndOnDisconnect,
      // A restored session's agents died with the earlier Core; its next turn's agent gets a new secret.
      capability: issueThreadCapability(),
      binDir: this.options.paths.binDir,
      loginShellPath: () => this.#loginShellPath.directories(),
      home: this.options.paths.home,
      baseEnv: this.options.env,
      providerIdleTimeoutMs: settings.providerIdleTimeoutMs,
      modelResponseTimeoutMs: settings.modelResponseTimeoutSeconds * 1000,
      unfollowedTurnGraceMs: settings.unfollowedTurnGraceMs,
      processLedger: this.options.processLedger,
      scriptRunner: this.options.scriptRunner,
      minFreeDiskBytes: async () => (await this.options.loadSettings()).limits.minFreeDiskBytes,
      ...(providerOptions !== undefined ? { providerOptions } : {}),
      ...(restored ? { restored } : {}),
      publish: (envelope) => {
        // Stored before it leaves Core, so a page that misses it (a reload, a crash) can have it replayed.
        try {
          store.appendEvent(envelope, storedPatchFor(envelope));
        } catch (error) {
          log("error", "could not store a session event", { sessionId: envelope.sessionId, seq: envelope.seq, error: String(error) });
        }
        this.#lastActivity.set(envelope.sessionId, this.#now());
        this.options.publish(envelope);
        this.#observe(envelope, session);
        // The last event a session sends: from here on only its tombstone is needed.
        if (envelope.event.type === "session-ended") this.#retire(session, envelope.event.reason);
      },
      onProviderSessionId: (providerSessionId) => {
        try {
          store.updateSession(record.sessionId, { providerSessionId });
        } catch (error) {
          log("error", "could not store a provider conversation id", { sessionId: record.sessionId, error: String(error) });
        }
      },
    });
    this.#sessions.set(record.sessionId, session);
    this.#lastActivity.set(record.sessionId, Date.parse(record.lastActivityAt) || this.#now());
    return session;
  }

  /** Ends a stored session that is not rebuilt: its row says so, its managed workspace goes, resume answers "ended". */
  #endStored(store: SessionStore, record: StoredSession, reason: SessionEndReason): void {
    const endedAt = this.#now();
    try {
      store.markEnded(record.sessionId, reason, new Date(endedAt).toISOString());
    } catch (error) {
      log("warn", "could not mark a stored session ended", { sessionId: record.sessionId, error: String(error) });
    }
    this.#ended.add(new EndedSession(record.origin, endedInfoOf(record), issueThreadCapability().digest, endedAt));
    this.#removeWorkspace(record.sessionId, record.workspace);
    this.#removeConversation(record.sessionId, record.provider, record.providerSessionId);
  }

  #touch(sessionId: string): void {
    if (this.#sessions.has(sessionId)) this.#lastActivity.set(sessionId, this.#now());
  }

  #requireStore(): SessionStore {
    const store = this.#store;
    if (store instanceof PedelecError) throw store;
    return store;
  }

  /**
   * The session, if the agent-side caller holds its capability. An unknown thread and a wrong capability get the
   * same answer, so a thread id alone tells nothing.
   */
  getForAgent(threadId: string, capability: string): Session {
    this.#requireStore();
    const session = this.#sessions.get(threadId);
    const ended = session === undefined ? this.#ended.get(threadId) : undefined;
    const digest = session?.setup.capability.digest ?? ended?.capabilityDigest;
    if (!capabilityMatches(digest, capability) || (session === undefined && ended === undefined)) {
      throw new PedelecError("THREAD_ACCESS_DENIED", `thread ${threadId} does not exist or its capability does not match`);
    }
    if (session === undefined) throw new PedelecError("SESSION_ENDED", `session ${threadId} has ended`);
    return session;
  }

  /**
   * The session, if `origin` may use it. Another origin's session gets the same answer as an unknown id, so a page
   * cannot learn which sessions exist.
   */
  getForOrigin(sessionId: string, origin: string): PageSession {
    this.#requireStore();
    const session = this.#sessions.get(sessionId) ?? this.#ended.get(sessionId);
    if (session === undefined || session.origin !== origin) {
      throw new PedelecError("THREAD_NOT_FOUND", `no session ${sessionId} for ${origin}`);
    }
    return session;
  }

  /** Every provider Pedelec knows, whether this machine can run it, and a sentence saying why not. */
  async listProviders(): Promise<ProviderStatus[]> {
    const reports = await reportProviders(this.options.providers, this.#locator, await this.options.loadSettings());
    return reports.map(({ code, name, available, error }) => ({ code, name, available, error }));
  }

  /** The defaults a page may read; paths, keys and profiles stay in Core. */
  async publicSettings(): Promise<PublicSettings> {
    const { defaultProvider, defaultEffortLevel, defaultModels } = await this.options.loadSettings();
    return { defaultProvider, defaultEffortLevel, defaultModels };
  }

  /** The last route following `sessionId` closed; see Session.watchUnfollowedTurn. */
  routeLost(sessionId: string, isFollowed: () => boolean): void {
    this.#sessions.get(sessionId)?.watchUnfollowedTurn(isFollowed);
  }

  /**
   * The user revoked the origin's Full Access: its Full Access runs die now (page runs in any of its sessions) and its
   * Full Access sessions end, since their agents run with the grant.
   */
  async revokeFullAccess(origin: string): Promise<{ stoppedRuns: number; endedSessions: number }> {
    const reason = new PedelecError("DENO_CANCELLED", `Full Access for ${origin} was revoked`);
    let stoppedRuns = 0;
    const ending: Promise<boolean>[] = [];
    for (const session of this.#sessions.values()) {
      if (session.origin !== origin || session.ended) continue;
      if (session.setup.access === "full") {
        stoppedRuns += session.scripts.active;
        ending.push(session.end("full-access-revoked"));
      } else {
        stoppedRuns += session.scripts.stopWhere((run) => run.access === "full", reason);
      }
    }
    const endedSessions = (await Promise.all(ending)).filter(Boolean).length;
    return { stoppedRuns, endedSessions };
  }

  /**
   * The pages whose claimants `isGone` matches left: tool calls they claimed and did not answer are requested again, in
   * every session, for the pages still there.
   */
  releaseToolClaims(isGone: (claimant: string) => boolean): number {
    let released = 0;
    for (const session of this.#sessions.values()) if (!session.ended) released += session.releaseToolClaims(isGone);
    return released;
  }

  /**
   * Core is stopping: running turns end with SESSION_ERROR and scripts stop, but sessions stay in the store, with their
   * workspaces, to be resumed by the next Core.
   */
  async shutdown(): Promise<void> {
    this.#loginShellPath.stop();
    await Promise.all([...this.#sessions.values()].map((session) => session.suspend()));
    await this.workspacesRemoved();
    if (!(this.#store instanceof PedelecError)) this.#store.close();
  }

  /**
   * Replaces an ended session by its tombstone, so its tools, provider adapter, listeners and timers can be freed,
   * and removes its workspace if Core made it (an explicit workspace is the user's and stays) and the conversation
   * Pedelec stored for its provider.
   */
  #retire(session: Session, reason: SessionEndReason): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    this.#lastActivity.delete(session.id);
    const endedAt = this.#now();
    let providerSessionId: string | null = null;
    try {
      const store = this.#requireStore();
      providerSessionId = store.get(session.id)?.providerSessionId ?? null;
      store.markEnded(session.id, reason, new Date(endedAt).toISOString());
    } catch (error) {
      log("warn", "could not mark an ended session in the store", { sessionId: session.id, error: String(error) });
    }
    this.#ended.add(new EndedSession(session.origin, session.info(), session.setup.capability.digest, endedAt));
    this.#removeWorkspace(session.id, session.setup.workspace);
    this.#removeConversation(session.id, session.setup.provider, providerSessionId);
  }

  /** Removes the conversation Pedelec stored for the session's provider, if it keeps one (see StoredConversations). */
  #removeConversation(sessionId: string, provider: ProviderCode, providerSessionId: string | null): void {
    const conversations = this.options.providers.get(provider)?.storedConversations;
    if (conversations === undefined || providerSessionId === null) return;
    const removal = conversations
      .remove(this.options.paths.home, providerSessionId)
      .catch((error: unknown) => log("warn", "could not remove an ended session's stored conversation", { sessionId, error: String(error) }))
      .finally(() => this.#workspaceRemovals.delete(removal));
    this.#workspaceRemovals.add(removal);
  }

  #removeWorkspace(sessionId: string, workspace: PreparedWorkspace): void {
    const removal = removeManagedWorkspace(this.options.paths.workspacesDir, workspace)
      .catch((error: unknown) => log("warn", "could not remove an ended session's workspace", { sessionId, error: String(error) }))
      .finally(() => this.#workspaceRemovals.delete(removal));
    this.#workspaceRemovals.add(removal);
  }

  /**
   * Calls `listener` with every event of every session, after it has been stored and sent to pages; returns the
   * function that stops it. A listener that throws is logged and never disturbs the session.
   */
  observeEvents(listener: (envelope: SessionEventEnvelope, origin: string, provider: ProviderCode) => void): () => void {
    this.#observers.add(listener);
    return () => void this.#observers.delete(listener);
  }

  /** Every session that has not ended, oldest first. */
  liveSessions(): LiveSessionSummary[] {
    const summaries: LiveSessionSummary[] = [];
    for (const session of this.#sessions.values()) {
      if (session.ended) continue;
      summaries.push({ origin: session.origin, info: session.info(), turnCount: this.#turnCountOf(session.id) });
    }
    return summaries.sort((first, second) => first.info.sessionCreatedAt.localeCompare(second.info.sessionCreatedAt));
  }

  /** Every origin with live sessions or ended ones kept in the store, with their counts. */
  originCounts(): OriginSessionCount[] {
    const counts = new Map<string, OriginSessionCount>();
    const entry = (origin: string): OriginSessionCount => {
      let count = counts.get(origin);
      if (count === undefined) {
        count = { origin, live: 0, ended: 0 };
        counts.set(origin, count);
      }
      return count;
    };
    for (const session of this.#sessions.values()) if (!session.ended) entry(session.origin).live += 1;
    if (!(this.#store instanceof PedelecError)) for (const record of this.#store.listEnded()) entry(record.origin).ended += 1;
    return [...counts.values()].sort((first, second) => first.origin.localeCompare(second.origin));
  }

  /** The provider adapters sessions are created with (their effort profile rules and defaults). */
  get providers(): ProviderRegistry {
    return this.options.providers;
  }

  /** Every provider with its availability, version and executable, found through Core's own locator. */
  async providerReports(): Promise<ProviderReport[]> {
    return reportProviders(this.options.providers, this.#locator, await this.options.loadSettings());
  }

  #observe(envelope: SessionEventEnvelope, session: Session): void {
    const { event } = envelope;
    if (event.type === "turn-started" && event.turnKind === "user" && this.#turnCounts.has(session.id)) {
      this.#turnCounts.set(session.id, this.#turnCounts.get(session.id)! + 1);
    }
    if (event.type === "session-ended") this.#turnCounts.delete(session.id);
    for (const observer of this.#observers) {
      try {
        observer(envelope, session.origin, session.setup.provider);
      } catch (error) {
        log("warn", "a session event observer failed", { error: String(error) });
      }
    }
  }

  #turnCountOf(sessionId: string): number {
    let count = this.#turnCounts.get(sessionId);
    if (count === undefined) {
      // Counted from the kept events once; every later turn-started adds one (#observe).
      const store = this.#store;
      const kept = store instanceof PedelecError ? [] : store.eventsAfter(sessionId, 0);
      count = kept.filter(({ event }) => event.type === "turn-started" && event.turnKind === "user").length;
      this.#turnCounts.set(sessionId, count);
    }
    return count;
  }
}
