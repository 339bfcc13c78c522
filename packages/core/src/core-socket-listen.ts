import { chmodSync } from "node:fs";
import type { Server, Socket } from "node:net";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { undoneOnFailure, type StartedStep } from "./core-start-up.js";
import { unlinkQuietly } from "./quiet-files.js";

/** What Core's socket needs to serve: the server (not yet listening), where it listens, and who takes its clients. */
export interface CoreSocketParts {
  server: Server;
  socketPath: string;
  /** Takes each client that connects. */
  accept(socket: Socket): void;
}

/**
 * Serves the Core protocol on the socket (created 0600; IPC_UNAVAILABLE when Core cannot listen). From here on ping
 * and shutdown are answered. Undone by closing the server and removing the socket file.
 */
export async function listenOnCoreSocket(parts: CoreSocketParts): Promise<StartedStep<Server>> {
  const { server, socketPath } = parts;
  server.on("connection", (socket: Socket) => parts.accept(socket));
  await listen(server, socketPath).catch((error: unknown) => {
    throw PedelecError.from(error, "IPC_UNAVAILABLE", "Core could not listen");
  });
  // Undone only once listening: a socket file there before it is another Core's, or already gone.
  const undo = (): void => {
    server.close();
    unlinkQuietly(socketPath);
  };
  return undoneOnFailure(undo, () => {
    chmodSync(socketPath, 0o600);
    return server;
  });
}

function listen(server: Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // The socket is created 0600 from the start; chmod afterwards only confirms it.
    const previousMask = process.umask(0o177);
    server.once("error", (error) => {
      process.umask(previousMask);
      reject(error);
    });
    server.listen(socketPath, () => {
      process.umask(previousMask);
      resolve();
    });
  });
}
