import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { Pedelec } from "../pedelec.js";
import type { PedelecSession } from "../pedelec-session.js";
import { randomId } from "../random-id.js";
import type {
  Activity,
  Artifact,
  CreateSessionOptions,
  SendTextOptions,
  TokenUsage,
  ToolDefinition,
  ToolHandler,
  ToolHandlerContext,
} from "../types.js";
import { withActivity, withCompleted, withDelta, without, withUserMessage } from "./chat-log.js";
import type { PedelecSessionHookStatus, SendOutcome, SessionChatMessage, UsePedelecSessionOptions } from "./types.js";

/** The part of the hook's result that changes: one immutable object per change, for useSyncExternalStore. */
export interface SessionState {
  readonly session: PedelecSession<string> | null;
  readonly status: PedelecSessionHookStatus;
  readonly messages: readonly SessionChatMessage[];
  readonly activity: readonly Activity[];
  readonly usage: TokenUsage;
  readonly artifacts: readonly Artifact[];
  readonly error: PedelecError | null;
}

/** Before any session: also what the server renders, so hydration sees the same. */
export const INACTIVE_STATE: SessionState = Object.freeze({
  session: null,
  status: "inactive",
  messages: Object.freeze([]),
  activity: Object.freeze([]),
  usage: Object.freeze({}),
  artifacts: Object.freeze([]),
  error: null,
});

/** One session this controller created (or is creating), with everything needed to let go of it. */
interface Attachment {
  readonly client: Pedelec;
  readonly key: string;
  /** Aborts a createSession() still on its way; the SDK then ends a session the desktop creates anyway. */
  readonly abort: AbortController;
  readonly ready: Promise<PedelecSession<string>>;
  session: PedelecSession<string> | null;
  readonly unsubscribe: Array<() => void>;
  /** The turn the activity list belongs to. */
  activityTurnId: string | undefined;
}

/** Stops an intended way, so not an `error`: the page cancelled the turn, or the session ended. */
const INTENDED_STOPS: ReadonlySet<string> = new Set(["TURN_CANCELLED", "SESSION_ENDED"]);

/**
 * The session of one `usePedelecSession()` call. It lives in the component's state, so it outlasts Strict Mode's
 * simulated unmount and remount: `release()` only lets go a macrotask later, and an `acquire()` for the same client and
 * settings before then keeps the session (and the createSession() on its way), so double effects create one session.
 * Every listener checks that its attachment is still the current one, so nothing from an old session leaks into the
 * state of a new one.
 */
export class SessionController {
  #state: SessionState = INACTIVE_STATE;
  readonly #listeners = new Set<() => void>();
  #current: Attachment | undefined;
  #releaseTimer: ReturnType<typeof setTimeout> | undefined;
  /** The options of the latest committed render: tool handlers given in `skills.tools` are looked up here per call. */
  latestOptions: UsePedelecSessionOptions | undefined;

  readonly getState = (): SessionState => this.#state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  /**
   * Holds a session of `client` created with settings `key` (see `sessionKey`): keeps the current one when it matches,
   * otherwise ends it and creates another from `latestOptions`.
   */
  acquire(client: Pedelec, key: string): void {
    clearTimeout(this.#releaseTimer);
    this.#releaseTimer = undefined;
    const current = this.#current;
    if (current !== undefined && current.client === client && current.key === key) return;
    this.#detach();
    this.#attach(client, key);
  }

  /** The component let go (unmounted, or its settings are about to change): the session ends unless re-acquired at once. */
  release(): void {
    clearTimeout(this.#releaseTimer);
    this.#releaseTimer = setTimeout(() => {
      this.#releaseTimer = undefined;
      this.#detach();
    }, 0);
  }

  readonly send = async (text: string, options?: SendTextOptions): Promise<SendOutcome> => {
    const attachment = this.#current;
    if (attachment === undefined) {
      return this.#failSend(undefined, new PedelecError("SEND_TEXT_FAILED", "There is no session to send to yet"));
    }
    let session: PedelecSession<string>;
    try {
      session = attachment.session ?? (await attachment.ready);
    } catch (error) {
      return { ok: false, error: PedelecError.from(error, "SEND_TEXT_FAILED") };
    }
    if (attachment !== this.#current) {
      return { ok: false, error: new PedelecError("SESSION_ENDED", "The session has ended") };
    }
    const messageId = randomId();
    this.#update(attachment, (state) => ({ ...state, error: null, messages: withUserMessage(state.messages, messageId, text) }));
    try {
      await session.sendText(text, options);
      return { ok: true };
    } catch (error) {
      const failure = PedelecError.from(error, "SEND_TEXT_FAILED");
      // The message never left the page: a turn was already running.
      if (failure.code === "SESSION_BUSY") {
        this.#update(attachment, (state) => ({ ...state, messages: without(state.messages, messageId) }));
      }
      return this.#failSend(attachment, failure);
    }
  };

  readonly cancel = async (): Promise<void> => {
    const attachment = this.#current;
    const session = attachment?.session;
    if (attachment === undefined || session === null || session === undefined) return;
    try {
      await session.cancel();
    } catch (error) {
      this.#update(attachment, (state) => ({ ...state, error: PedelecError.from(error, "SDK_TRANSPORT_ERROR") }));
    }
  };

  #failSend(attachment: Attachment | undefined, error: PedelecError): SendOutcome {
    if (attachment !== undefined && !INTENDED_STOPS.has(error.code)) this.#update(attachment, (state) => ({ ...state, error }));
    return { ok: false, error };
  }

  #attach(client: Pedelec, key: string): void {
    const abort = new AbortController();
    let attachment!: Attachment;
    const ready = client
      .createSession(
        createSessionInput(this.latestOptions, () => this.latestOptions),
        { signal: abort.signal },
      )
      .then(
        (session) => {
          if (attachment !== this.#current) {
            // Let go of while the answer travelled: nobody will hold it.
            void session.end().catch(ignore);
            throw new PedelecError("SESSION_ENDED", "The session was let go of before it was created");
          }
          attachment.session = session;
          this.#follow(attachment, session);
          return session;
        },
        (error: unknown) => {
          const failure = PedelecError.from(error, "SESSION_ERROR");
          this.#update(attachment, () => ({ ...INACTIVE_STATE, status: "error", error: failure }));
          throw failure;
        },
      );
    // A failure is in the state; send() awaits `ready` itself and turns it into its outcome.
    ready.catch(ignore);
    attachment = { client, key, abort, ready, session: null, unsubscribe: [], activityTurnId: undefined };
    this.#current = attachment;
    this.#setState({ ...INACTIVE_STATE, status: "connecting" });
  }

  #follow(attachment: Attachment, session: PedelecSession<string>): void {
    const update = (change: (state: SessionState) => SessionState): void => this.#update(attachment, change);
    this.#update(attachment, (state) => ({ ...state, session, status: session.getStatus(), usage: session.usage }));
    attachment.unsubscribe.push(
      session.onStatus((status) => update((state) => ({ ...state, status }))),
      session.onChatDelta((delta, context) => {
        if (context.messageId === undefined) return;
        const messageId = context.messageId;
        update((state) => ({ ...state, messages: withDelta(state.messages, messageId, delta) }));
      }),
      session.onChat((message) => update((state) => ({ ...state, messages: withCompleted(state.messages, message.messageId, message.text) }))),
      session.onActivity((activity, context) => {
        const fresh = context.turnId !== attachment.activityTurnId;
        attachment.activityTurnId = context.turnId;
        update((state) => ({ ...state, activity: withActivity(fresh ? [] : state.activity, activity) }));
      }),
      session.onUsage((usage) => update((state) => ({ ...state, usage }))),
      // A file written again replaces its earlier entry, so the list is the newest version of each, newest last.
      session.onArtifact((artifact) =>
        update((state) => ({ ...state, artifacts: [...state.artifacts.filter((known) => known.path !== artifact.path), artifact] })),
      ),
      session.onError((error) => update((state) => ({ ...state, error }))),
      // Normally onStatus said so already; onEnded also covers an end registered after the fact.
      session.onEnded(() => update((state) => (state.status === "ended" ? state : { ...state, status: "ended" }))),
    );
  }

  /** Lets go of the current session: stops a createSession() on its way, or ends the session (which stops its turn). */
  #detach(): void {
    const attachment = this.#current;
    if (attachment === undefined) return;
    this.#current = undefined;
    attachment.abort.abort(new PedelecError("SESSION_ENDED", "The component holding the session let go of it"));
    for (const unsubscribe of attachment.unsubscribe) unsubscribe();
    // end() settles a pending send() with SESSION_ENDED, which send() turns into its outcome.
    if (attachment.session !== null) void attachment.session.end().catch(ignore);
    this.#setState(INACTIVE_STATE);
  }

  #update(attachment: Attachment, change: (state: SessionState) => SessionState): void {
    if (attachment !== this.#current) return;
    this.#setState(change(this.#state));
  }

  #setState(state: SessionState): void {
    if (state === this.#state) return;
    this.#state = state;
    for (const listener of [...this.#listeners]) listener();
  }
}

/**
 * The settings whose change means another session, as one comparable string. `skills` are left out on purpose (see
 * `UsePedelecSessionOptions`): apps rebuild them on every render.
 */
export function sessionKey(options: UsePedelecSessionOptions | undefined): string {
  return JSON.stringify([
    options?.provider ?? null,
    options?.model ?? null,
    options?.effortLevel ?? null,
    options?.effort ?? null,
    options?.access ?? null,
    options?.workspace?.path ?? null,
    options?.autoEndOnDisconnect ?? null,
  ]);
}

/**
 * What createSession() gets: the options without the hook's own `enabled`, and with every tool handler of
 * `skills.tools` replaced by one that runs the handler of the same tool in the latest options (falling back to the one
 * given at creation), so a handler that closes over component state never runs with an old render's values.
 */
function createSessionInput(
  options: UsePedelecSessionOptions | undefined,
  latest: () => UsePedelecSessionOptions | undefined,
): CreateSessionOptions | undefined {
  if (options === undefined) return undefined;
  const { enabled: _enabled, ...input } = options;
  const tools = input.skills?.tools;
  if (tools === undefined || !Array.isArray(tools)) return input as CreateSessionOptions;
  const latestHandler = (name: string, created: ToolHandler): ToolHandler => {
    const tool = latest()?.skills?.tools.find((candidate: ToolDefinition) => candidate.name === name);
    return typeof tool?.handler === "function" ? (tool.handler.bind(tool) as ToolHandler) : created;
  };
  const wrapped = tools.map((tool: ToolDefinition): ToolDefinition => {
    if (typeof tool !== "object" || tool === null || typeof tool.handler !== "function") return tool;
    const created = tool.handler.bind(tool) as ToolHandler;
    return { ...tool, handler: (args: unknown, context: ToolHandlerContext) => latestHandler(tool.name, created)(args, context) };
  });
  return { ...input, skills: { ...input.skills!, tools: wrapped } } as CreateSessionOptions;
}

function ignore(): void {}
