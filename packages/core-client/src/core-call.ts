import { readCoreReplyFrame, type CoreReplyFrame } from "@pedelec/protocol/agent-command-replies";
import type { CoreRequestFrame } from "@pedelec/protocol/core-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { RequestClient } from "@pedelec/protocol/request-client";
import type { CoreRequestType } from "@pedelec/protocol/requests";
import { CoreSocketTransport } from "./core-socket-transport.js";

export interface CoreCall<Result> {
  type: CoreRequestType;
  payload: unknown;
  /** Checks Core's result (a plain guard or a schema, as the caller can afford) and returns what the caller gets. */
  check: (result: unknown) => Result;
  signal?: AbortSignal;
}

/**
 * One request on a connection of its own, for commands that start, ask Core once and exit (`pedelec-cli` runs for
 * every tool call). Nothing on this path loads the schema library: frames are read by plain checks that accept
 * exactly what the protocol's schemas accept, and the caller brings the check of its result.
 */
export async function callCore<Result>(socketPath: string, call: CoreCall<Result>): Promise<Result> {
  const transport = await CoreSocketTransport.open(socketPath, call.signal);
  let fatal: PedelecError | undefined;
  const client = new RequestClient<CoreRequestFrame, CoreReplyFrame>({
    transport,
    read: readCoreReplyFrame,
    onMessage: (frame) => {
      // Core sends a fatal frame right before it gives up on the connection; nothing more will come.
      if (frame.kind !== "fatal") return;
      fatal = PedelecError.fromWire(frame.error);
      client.close(fatal);
    },
    closeError: (cause) =>
      fatal ?? (cause instanceof PedelecError ? cause : new PedelecError("IPC_UNAVAILABLE", "the connection to Pedelec Core closed")),
    abortCode: "IPC_UNAVAILABLE",
    malformedMessage: "close-connection",
    malformedReply: "keep-connection",
  });
  try {
    return await client.request((id): CoreRequestFrame => ({ kind: "request", id, type: call.type, payload: call.payload }), {
      label: call.type,
      check: call.check,
      signal: call.signal,
    });
  } finally {
    client.close();
  }
}
