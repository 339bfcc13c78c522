import { randomUUID } from "node:crypto";
import type { ProviderCode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { CreateSessionInput, ProviderStatus, PublicSettings, SessionInfo } from "@pedelec/protocol/requests";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { CorePaths } from "./core-paths.js";
import { DEFAULT_ENDED_SESSION_LIMITS, EndedSession, EndedSessions, type EndedSessionLimits } from "./ended-session.js";
import { log } from "./logger.js";
import { ProviderLocator } from "./provider-locator.js";
import { LoginShellPath } from "./providers/login-shell-path.js";
import { reportProviders } from "./provider-status.js";
import type { ProcessGroupLedger } from "./process-group-ledger.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { Session } from "./session.js";
import type { ScriptRunner } from "@pedelec/script-runtime/script-runner";
import { configuredEffortArgv, type Settings } from "./settings.js";
import { capabilityMatches, issueThreadCapability } from "./thread-capability.js";
import { ToolRegistry } from "./tool-registry.js";
import { requireEndpointSettings, requireModel, type OllamaEndpoint } from "./providers/ollama/ollama-endpoint.js";
import { prepareExplicitWorkspace, prepareManagedWorkspace, removeManagedWorkspace, type PreparedWorkspace } from "./workspace.js";

export interface SessionManagerOptions {
  paths: CorePaths;
  loadSettings: () => Promise<Settings>;
  providers: ProviderRegistry;
  env: NodeJS.ProcessEnv;
  processLedger: ProcessGroupLedger;
  scriptRunner: () => Promise<ScriptRunner>;
  publish: (envelope: SessionEventEnvelope) => void;
  /** How many ended sessions are remembered, and for how long (DEFAULT_ENDED_SESSION_LIMITS). */
  endedSessionLimits?: Partial<EndedSessionLimits>;
  /** The clock ended sessions age by. */
  now?: () => number;
}

/** A session as a page reaches it: running, or what is kept of it once it ended. */
export type PageSession = Session | EndedSession;

/** How long createSession waits for an HTTP provider's endpoint to list its models. */
const ENDPOINT_CHECK_TIMEOUT_MS = 10_000;

/** Creates sessions and finds them again, enforcing that a session belongs to the origin that made it. */
export class SessionManager {
  /** Sessions that have not ended yet; an ended one moves to #ended and its workspace, if managed, is removed. */
  readonly #sessions = new Map<string, Session>();
  readonly #ended: EndedSessions;
  readonly #workspaceRemovals = new Set<Promise<void>>();
  readonly #now: () => number;
  readonly #locator: ProviderLocator;
  readonly #loginShellPath: LoginShellPath;

  constructor(private readonly options: SessionManagerOptions) {
    this.#now = options.now ?? Date.now;
    this.#ended = new EndedSessions({ ...DEFAULT_ENDED_SESSION_LIMITS, ...options.endedSessionLimits }, this.#now);
    this.#loginShellPath = new LoginShellPath(options.env);
    this.#locator = new ProviderLocator(options.providers, options.env, this.#loginShellPath);
  }

  /** Sessions held whole (not yet ended, or ending) and sessions remembered as ended. */
  get counts(): { live: number; ended: number } {
    return { live: this.#sessions.size, ended: this.#ended.size };
  }

  /** Resolves once the managed workspaces of sessions ended so far have been removed. */
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
    const provider = this.#chooseProvider(input, settings);
    const model = input.model ?? settings.defaultModels[provider] ?? null;
    if (provider === "ollama" && model === null) {
      throw new PedelecError("MODEL_REQUIRED", "an ollama session needs a model (pass model, or set a default model for ollama)");
    }
    if (input.access === "full" && !fullAccessAdmitted) {
      throw new PedelecError("FULL_ACCESS_NOT_GRANTED", `Full Access is not granted to ${origin}`);
    }
    let endpoint: OllamaEndpoint | undefined;
    if (provider === "ollama") {
      endpoint = { ...settings.ollama };
      requireEndpointSettings(endpoint);
    }
    const located = await this.#locator.locate(provider, input.provider === undefined, settings.providers[provider]?.path);
    if (endpoint !== undefined && model !== null) await requireModel(endpoint, model, AbortSignal.timeout(ENDPOINT_CHECK_TIMEOUT_MS));
    const effortLevel = input.effortLevel ?? settings.defaultEffortLevel;
    const effortArgv = located.adapter.validateEffortArgv(
      configuredEffortArgv(settings, provider, effortLevel) ?? located.adapter.defaultEffortProfiles()[effortLevel],
      `effort profile ${provider}/${effortLevel}`,
    );
    const tools = new ToolRegistry(input.skills?.tools ?? []);
    const sessionId = randomUUID();
    const workspace: PreparedWorkspace = input.workspace
      ? await prepareExplicitWorkspace(input.workspace.path, {
          pedelecHome: this.options.paths.home,
          workspacesDir: this.options.paths.workspacesDir,
          userHome: this.options.env.HOME,
        })
      : await prepareManagedWorkspace(this.options.paths.workspacesDir, sessionId);
    const session: Session = new Session({
      id: sessionId,
      origin,
      provider,
      adapter: located.adapter,
      executablePath: located.executablePath,
      effortLevel,
      effortArgv,
      model,
      guidance: input.skills?.guidance ?? "",
      tools,
      workspace,
      access: input.access ?? "sandbox",
      autoEndOnDisconnect: input.autoEndOnDisconnect ?? true,
      capability: issueThreadCapability(),
      binDir: this.options.paths.binDir,
      loginShellPath: await this.#loginShellPath.directories(),
      home: this.options.paths.home,
      baseEnv: this.options.env,
      providerIdleTimeoutMs: settings.providerIdleTimeoutMs,
      unfollowedTurnGraceMs: settings.unfollowedTurnGraceMs,
      processLedger: this.options.processLedger,
      scriptRunner: this.options.scriptRunner,
      ...(endpoint ? { endpoint } : {}),
      publish: (envelope) => {
        this.options.publish(envelope);
        // The last event a session sends: from here on only its tombstone is needed.
        if (envelope.event.type === "session-ended") this.#retire(session);
      },
    });
    this.#sessions.set(sessionId, session);
    return session.info();
  }

  /**
   * The session, if the agent-side caller holds its capability. An unknown thread and a wrong capability get the
   * same answer, so a thread id alone tells nothing.
   */
  getForAgent(threadId: string, capability: string): Session {
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

  /** Ends every session (killing provider processes) and removes managed workspaces. */
  async shutdown(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    await Promise.all(sessions.map((session) => session.end("shutdown")));
    // A session that was already ending when shutdown began is retired here, should its end not have done so.
    for (const session of sessions) this.#retire(session);
    await this.workspacesRemoved();
  }

  /**
   * Replaces an ended session by its tombstone, so its tools, provider adapter, listeners and timers can be freed,
   * and removes its workspace if Core made it; an explicit workspace is the user's and stays.
   */
  #retire(session: Session): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    this.#ended.add(new EndedSession(session.origin, session.info(), session.setup.capability.digest, this.#now()));
    const removal = removeManagedWorkspace(this.options.paths.workspacesDir, session.setup.workspace)
      .catch((error: unknown) => log("warn", "could not remove an ended session's workspace", { sessionId: session.id, error: String(error) }))
      .finally(() => this.#workspaceRemovals.delete(removal));
    this.#workspaceRemovals.add(removal);
  }

  #chooseProvider(input: CreateSessionInput, settings: Settings): ProviderCode {
    if (input.provider) return input.provider;
    if (settings.defaultProvider === null) {
      throw new PedelecError("DEFAULT_PROVIDER_NOT_SET", "no provider was given and no default provider is set in Pedelec");
    }
    return settings.defaultProvider;
  }
}
