import type { Socket } from "node:net";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { CoreRequestFrame } from "@pedelec/protocol/core-request-frame";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { PendingFrameBytes, type ConnectionLimits } from "./connection-limits.js";
import { connectionClaimant } from "./connection-claimant.js";
import { CoreClientConnection } from "./core-connection.js";
import type { SessionManager } from "./session-manager.js";

/** What Core does with a client connection's requests, and once it has closed. */
export interface ClientConnectionHandlers {
  route(connection: CoreClientConnection, frame: CoreRequestFrame): void;
  /** After the connection has left the open ones. */
  closed(connection: CoreClientConnection): void;
}

/**
 * The clients connected to Core's socket, within the socket's limits (connection-limits.ts): who receives which
 * session's events, and what a client that leaves gives back.
 */
export class ClientConnections {
  readonly #open = new Set<CoreClientConnection>();
  readonly #limits: ConnectionLimits;
  readonly #pendingFrameBytes: PendingFrameBytes;

  constructor(limits: ConnectionLimits) {
    this.#limits = limits;
    this.#pendingFrameBytes = new PendingFrameBytes(limits.maxPendingFrameBytes);
  }

  /** Serves a client that connected, or refuses it (IPC_UNAVAILABLE) when Core serves as many as it may. */
  accept(socket: Socket, handlers: ClientConnectionHandlers): void {
    const limits = this.#limits;
    const connection = new CoreClientConnection(socket, {
      incompleteFrameTimeoutMs: limits.incompleteFrameTimeoutMs,
      pendingFrameBytes: this.#pendingFrameBytes,
    });
    if (this.#open.size >= limits.maxConnections) {
      connection.refuse(new PedelecError("IPC_UNAVAILABLE", `Core is already serving ${limits.maxConnections} connections; try again shortly`));
      return;
    }
    this.#open.add(connection);
    connection.onMessage((frame) => handlers.route(connection, frame));
    connection.onClose(() => {
      this.#open.delete(connection);
      handlers.closed(connection);
    });
  }

  /** Sends a session's event to every connection that follows the session. */
  publish(envelope: SessionEventEnvelope): void {
    for (const connection of this.#open) {
      if (connection.subscriptions.has(envelope.sessionId)) connection.send({ kind: "event", envelope });
    }
  }

  /** A closed connection's claimed tool calls go back to whoever still follows the session; unfollowed sessions are told. */
  releaseFollowers(sessions: SessionManager, connection: CoreClientConnection): void {
    const prefix = connectionClaimant(connection, "");
    sessions.releaseToolClaims((claimant) => claimant.startsWith(prefix));
    for (const sessionId of connection.subscriptions) {
      const isFollowed = (): boolean => [...this.#open].some((other) => other.subscriptions.has(sessionId));
      if (!isFollowed()) sessions.routeLost(sessionId, isFollowed);
    }
  }

  /** Closes every open connection. */
  closeAll(): void {
    for (const connection of this.#open) connection.close();
  }
}
