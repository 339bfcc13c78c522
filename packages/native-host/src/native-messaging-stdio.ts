import type { Readable, Writable } from "node:stream";
import { randomUUID } from "node:crypto";
import { encodeJsonFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import { splitIntoChunks } from "@pedelec/protocol/chunking";
import { MAX_NATIVE_MESSAGE_BYTES, NATIVE_CHUNK_BYTES, type HostToExtensionMessage } from "@pedelec/protocol/native-wire";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";

/** Chrome sends the host at most 64 MiB per message. */
const MAX_INCOMING_BYTES = 64 * 1024 * 1024;

/**
 * Chrome Native Messaging framing on the host side: 4-byte little-endian length + UTF-8 JSON, in on stdin and out on
 * stdout. Outgoing messages over Chrome's 1 MiB limit are split into chunk frames, never truncated.
 */
export class NativeMessagingStdio {
  readonly #decoder = new FrameDecoder(MAX_INCOMING_BYTES);

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    handlers: { onMessage: (message: unknown) => void; onBadFrame: (error: PedelecError) => void; onEnd: () => void },
  ) {
    input.on("data", (chunk: Buffer) => {
      for (const decoded of this.#decoder.push(chunk)) {
        if (decoded.ok) handlers.onMessage(decoded.message);
        else handlers.onBadFrame(decoded.error);
      }
    });
    input.on("end", handlers.onEnd);
    input.on("close", handlers.onEnd);
  }

  send(message: HostToExtensionMessage): void {
    for (const json of splitIntoChunks(message, NATIVE_CHUNK_BYTES, randomUUID())) {
      this.output.write(encodeJsonFrame(json, MAX_NATIVE_MESSAGE_BYTES));
    }
  }
}
