import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { coreLifecycleRequestSchemas, isCoreLifecycleRequestType } from "@pedelec/protocol/core-lifecycle-requests";
import type { CoreRequestFrame } from "@pedelec/protocol/core-request-frame";
import type { CoreClientConnection } from "./core-connection.js";
import { CORE_VERSION } from "./core-version.js";
import { answerHello } from "./protocol-hello.js";
import { checkedPayload, reply } from "./request-reply.js";
import type { SessionRuntime } from "./session-runtime.js";

/** What Core answers from before its session runtime has loaded. */
export interface CoreRouteParts {
  home: string;
  /** How many sessions run now (0 before the session runtime has loaded). */
  activeSessions(): number;
  /** The asset server's port, or null when it is not running. */
  assetPort(): number | null;
  /** Loads the session runtime, which answers every other request. */
  loadRuntime(): Promise<SessionRuntime>;
  /** Stops Core; a shutdown request calls it once its answer is on its way. */
  stop(): Promise<void>;
}

/** A request frame from a client connection, routed. */
export type CoreRoute = (connection: CoreClientConnection, frame: CoreRequestFrame) => void;

type AnsweredLifecycleFrame = CoreRequestFrame & { type: Exclude<keyof typeof coreLifecycleRequestSchemas, "hello"> };

/**
 * Routes Core's requests: hello, ping and shutdown are answered from the moment Core listens; whatever else a client
 * asks waits for the session runtime, in the order it came.
 */
export function createCoreRoute(parts: CoreRouteParts): CoreRoute {
  const startedAt = new Date().toISOString();
  const answerLifecycle = (frame: AnsweredLifecycleFrame): unknown => {
    checkedPayload(coreLifecycleRequestSchemas[frame.type].payload, frame.type, frame.payload);
    if (frame.origin !== undefined) throw new PedelecError("INVALID_INPUT", `${frame.type} is not available to web pages`);
    if (frame.type === "shutdown") {
      setImmediate(() => void parts.stop());
      return { stopping: true };
    }
    return {
      pid: process.pid,
      version: CORE_VERSION,
      home: parts.home,
      startedAt,
      sessions: parts.activeSessions(),
      assetPort: parts.assetPort(),
    };
  };
  return (connection, frame) => {
    const { type } = frame;
    // Answered before the connection's next frame is read: an incompatible client is refused before anything else runs.
    if (type === "hello") {
      answerHello(connection, frame);
      return;
    }
    if (isCoreLifecycleRequestType(type) && type !== "hello") {
      reply(connection, frame, async () => answerLifecycle({ ...frame, type }));
      return;
    }
    parts.loadRuntime().then(
      (loaded) => loaded.route(connection, frame),
      (error: unknown) => reply(connection, frame, () => Promise.reject(error)),
    );
  };
}
