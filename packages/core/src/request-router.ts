import { randomUUID } from "node:crypto";
import type { CoreRequestFrame } from "@pedelec/protocol/core-request-frame";
import type { CoreLifecycleRequestType } from "@pedelec/protocol/core-lifecycle-requests";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import {
  coreRequestSchemas,
  type extensionToCoreRequestSchemas,
  isCoreRequestType,
  isExtensionToCoreRequestType,
  isSessionRequestType,
  type sessionRequestSchemas,
  type localRequestSchemas,
  type CoreRequestType,
} from "@pedelec/protocol/requests";
import type { AssetTransfers } from "./assets/asset-transfers.js";
import type { FullAccessGate } from "./full-access-gate.js";
import type { z } from "zod";
import type { CoreClientConnection } from "./core-connection.js";
import type { SessionManager } from "./session-manager.js";
import { AnswerThen, checkedPayload, reply } from "./request-reply.js";
import { connectionClaimant } from "./connection-claimant.js";
import { listWorkspaceEntries } from "./workspace-listing.js";

type Payload<T extends CoreRequestType> = z.infer<(typeof coreRequestSchemas)[T]["payload"]>;
type Result<T extends CoreRequestType> = z.input<(typeof coreRequestSchemas)[T]["result"]>;

export interface RouterContext {
  sessions: SessionManager;
  fullAccess: FullAccessGate;
  /** The asset server's transfers once whenReady() has resolved; undefined before. */
  assets: () => AssetTransfers | undefined;
  /**
   * Settles once the session store is open, its sessions rebuilt and the asset server started (starting all that if it
   * has not started yet); every request but ping and shutdown waits for it.
   */
  whenReady: () => Promise<void>;
}

type SessionHandlers = {
  [T in keyof typeof sessionRequestSchemas | keyof typeof extensionToCoreRequestSchemas]: (
    payload: Payload<T>,
    origin: string,
    connection: CoreClientConnection,
    frame: CoreRequestFrame,
  ) => Promise<Result<T> | AnswerThen<Result<T>>> | Result<T> | AnswerThen<Result<T>>;
};
/** Ping and shutdown are answered before this router has loaded (see core-route.ts), never by it. */
type LocalHandlers = {
  [T in Exclude<keyof typeof localRequestSchemas, CoreLifecycleRequestType>]: (
    payload: Payload<T>,
    connection: CoreClientConnection,
    frame: CoreRequestFrame,
  ) => Promise<Result<T>> | Result<T>;
};

/**
 * Validates each request against the protocol and runs it once what sessions need is ready; every failure becomes a
 * coded error response. Ping and shutdown never reach it.
 */
export function createRequestRouter(context: RouterContext) {
  const { sessions } = context;
  /** Full Access needs the native host's attestation for this very request; a page's flag alone never has it. */
  const admitFullAccess = (frame: CoreRequestFrame): boolean => {
    context.fullAccess.admit(frame, frame.payload);
    return true;
  };

  const sessionHandlers: SessionHandlers = {
    createSession: async (payload, origin, connection, frame) => {
      const info = await sessions.create(origin, payload, payload.access === "full" && admitFullAccess(frame));
      connection.subscriptions.add(info.sessionId);
      return info;
    },
    resumeSession: (payload, origin, connection) => {
      const session = sessions.getForOrigin(payload.sessionId, origin);
      const info = session.info();
      return new AnswerThen(info, () => follow(connection, session.id, session.ended ? undefined : payload.afterSeq, info.lastSeq));
    },
    subscribeSession: (payload, origin, connection) => {
      const session = sessions.getForOrigin(payload.sessionId, origin);
      const { lastSeq } = session.info();
      return new AnswerThen({ lastSeq }, () => follow(connection, session.id, session.ended ? undefined : payload.afterSeq, lastSeq));
    },
    sendText: (payload, origin) => {
      sessions.getForOrigin(payload.sessionId, origin).startTurn(payload.turnId, payload.text);
      return { turnId: payload.turnId };
    },
    prepareSession: (payload, origin) => ({ turnId: sessions.getForOrigin(payload.sessionId, origin).prepare(payload.turnId) }),
    claimToolCall: (payload, origin, connection) => ({
      claimed: sessions
        .getForOrigin(payload.sessionId, origin)
        .claimToolCall(payload.toolRequestId, connectionClaimant(connection, payload.claimant)),
    }),
    submitToolResult: (payload, origin, connection) => {
      const claimant = payload.claimant === undefined ? undefined : connectionClaimant(connection, payload.claimant);
      sessions.getForOrigin(payload.sessionId, origin).submitToolResult(payload.toolRequestId, payload.outcome, claimant);
      return { accepted: true as const };
    },
    cancelTurn: async (payload, origin) => ({ cancelled: await sessions.getForOrigin(payload.sessionId, origin).cancelTurn() }),
    listProviders: () => sessions.listProviders(),
    getSettings: () => sessions.publicSettings(),
    endSession: async (payload, origin) => ({
      ended: await sessions.getForOrigin(payload.sessionId, origin).end(payload.reason ?? "requested"),
    }),
    runWorkspaceScript: async (payload, origin, connection, frame) => {
      const session = sessions.getForOrigin(payload.sessionId, origin);
      const { sessionId: _sessionId, runId, access = "sandbox", ...spec } = payload;
      if (access === "full") admitFullAccess(frame);
      return session.scripts.run({ runId, caller: "page", access, spec, signal: connection.closedSignal });
    },
    cancelWorkspaceRun: (payload, origin) => ({
      cancelled: sessions
        .getForOrigin(payload.sessionId, origin)
        .scripts.cancel(payload.runId, new PedelecError("DENO_CANCELLED", "the page cancelled the run")),
    }),
    prepareAssetUpload: (payload, origin) =>
      startedAssets().prepareUpload(sessions.getForOrigin(payload.sessionId, origin), { path: payload.path, sizeBytes: payload.sizeBytes }),
    prepareAssetDownload: (payload, origin) =>
      startedAssets().prepareDownload(sessions.getForOrigin(payload.sessionId, origin), { path: payload.path }),
    listAssets: (payload, origin) => startedAssets().list(sessions.getForOrigin(payload.sessionId, origin)),
    listWorkspaceEntries: async (payload, origin) => {
      const session = sessions.getForOrigin(payload.sessionId, origin);
      if (session.ended) throw new PedelecError("SESSION_ENDED", `session ${session.id} has ended`);
      return { paths: await listWorkspaceEntries(session.setup.workspace.path, payload.kind, payload.path ?? null) };
    },
    revokeFullAccess: async (payload, origin) => {
      context.fullAccess.revoke(origin, payload.revokedAt);
      return sessions.revokeFullAccess(origin);
    },
    releaseToolClaims: (payload, _origin, connection) => {
      const claimant = connectionClaimant(connection, payload.claimant);
      return { released: sessions.releaseToolClaims((held) => held === claimant) };
    },
  };

  /**
   * Subscribes `connection` to a session; with `afterSeq`, first sends the kept events it missed (those up to `upToSeq`,
   * the seq its answer reported; later ones arrive live).
   */
  function follow(connection: CoreClientConnection, sessionId: string, afterSeq: number | undefined, upToSeq: number): void {
    if (afterSeq !== undefined && afterSeq < upToSeq) {
      for (const envelope of sessions.eventsAfter(sessionId, afterSeq)) {
        if (envelope.seq > upToSeq) break;
        connection.send({ kind: "event", envelope });
      }
    }
    connection.subscriptions.add(sessionId);
  }

  const localHandlers: LocalHandlers = {
    toolList: (payload) =>
      sessions
        .getForAgent(payload.threadId, payload.capability)
        .setup.tools.list()
        .map((tool) => ({ name: tool.name, description: tool.description, argsSchema: tool.argsSchema, timeoutMs: tool.timeoutMs })),
    toolSpec: (payload) => {
      const tool = sessions.getForAgent(payload.threadId, payload.capability).setup.tools.get(payload.toolName);
      return { name: tool.name, description: tool.description, argsSchema: tool.argsSchema, timeoutMs: tool.timeoutMs };
    },
    toolCall: async (payload, connection) => ({
      result: await sessions.getForAgent(payload.threadId, payload.capability).callTool(payload.toolName, payload.argsJson, connection.closedSignal),
    }),
    runScript: async (payload, connection, frame) => {
      const session = sessions.getForAgent(payload.threadId, payload.capability);
      const { threadId: _threadId, capability: _capability, ...spec } = payload;
      const {
        stdout: _stdout,
        stderr: _stderr,
        ...result
      } = await session.scripts.run({
        runId: `agent-${randomUUID()}`,
        caller: "agent",
        access: session.setup.access,
        spec,
        signal: connection.closedSignal,
        onOutput: (stream, chunk) => connection.send({ kind: "run-output", id: frame.id, stream, data: chunk.toString("base64") }),
      });
      return result;
    },
  };

  /** Asset handlers run after whenReady(), which starts the asset server (or records that it could not start). */
  function startedAssets(): AssetTransfers {
    const assets = context.assets();
    if (assets === undefined) throw new PedelecError("ASSET_UPLOAD_SERVER_UNAVAILABLE", "the asset server has not started");
    return assets;
  }

  async function run(frame: CoreRequestFrame, connection: CoreClientConnection): Promise<unknown> {
    const { type } = frame;
    if (!isCoreRequestType(type)) throw new PedelecError("INVALID_INPUT", `unknown request type ${JSON.stringify(type)}`);
    const payload: unknown = checkedPayload(coreRequestSchemas[type].payload, type, frame.payload);
    await context.whenReady();
    if (isSessionRequestType(type) || isExtensionToCoreRequestType(type)) {
      if (frame.origin === undefined) throw new PedelecError("INVALID_INPUT", `${type} needs the page origin`);
      const handler = sessionHandlers[type] as (
        payload: unknown,
        origin: string,
        connection: CoreClientConnection,
        frame: CoreRequestFrame,
      ) => unknown;
      return await handler(payload, frame.origin, connection, frame);
    }
    if (frame.origin !== undefined) throw new PedelecError("INVALID_INPUT", `${type} is not available to web pages`);
    const handler = localHandlers[type as keyof LocalHandlers] as (
      payload: unknown,
      connection: CoreClientConnection,
      frame: CoreRequestFrame,
    ) => unknown;
    return await handler(payload, connection, frame);
  }

  return (connection: CoreClientConnection, frame: CoreRequestFrame): void => reply(connection, frame, () => run(frame, connection));
}

export type RequestRoute = ReturnType<typeof createRequestRouter>;
