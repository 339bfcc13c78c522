import type { CoreRequestFrame } from "@pedelec/protocol/core-request-frame";
import { coreLifecycleRequestSchemas } from "@pedelec/protocol/core-lifecycle-requests";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { protocolVersionMismatch } from "@pedelec/protocol/protocol-mismatch";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import type { CoreClientConnection } from "./core-connection.js";
import { checkedPayload } from "./request-reply.js";

/**
 * Answers a client's `hello` at once, before the next frame of the connection is read: Core's protocol version when the
 * two can talk; otherwise PROTOCOL_VERSION_MISMATCH (naming the part to update) and the connection closes, so nothing
 * the client sent after its hello is served.
 */
export function answerHello(connection: CoreClientConnection, frame: CoreRequestFrame): void {
  let mismatch: PedelecError | undefined;
  try {
    if (frame.origin !== undefined) throw new PedelecError("INVALID_INPUT", "hello is not available to web pages");
    const { protocolVersion, part } = checkedPayload(coreLifecycleRequestSchemas.hello.payload, "hello", frame.payload);
    mismatch = protocolVersionMismatch({ part: "core", version: PROTOCOL_VERSION }, { part, version: protocolVersion });
  } catch (error) {
    connection.send({ kind: "response", id: frame.id, ok: false, error: PedelecError.from(error, "INVALID_INPUT").toWire() });
    return;
  }
  if (mismatch === undefined) {
    connection.send({ kind: "response", id: frame.id, ok: true, result: { protocolVersion: PROTOCOL_VERSION } });
    return;
  }
  connection.send({ kind: "response", id: frame.id, ok: false, error: mismatch.toWire() });
  connection.refuse(mismatch);
}
