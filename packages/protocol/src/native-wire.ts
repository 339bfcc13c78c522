import { z } from "zod";
import { coreEventFrameSchema, coreFatalFrameSchema, coreRequestFrameSchema, coreResponseFrameSchema } from "./core-wire.js";
import { pageOriginSchema } from "./origin.js";
import { wireErrorSchema } from "./wire-error.js";
import { EXTENSION_TO_CORE_REQUEST_TYPES, SESSION_REQUEST_TYPES } from "./requests.js";
import { fullAccessClaimSchema } from "./full-access.js";

/** The Native Messaging host name registered with the browser. */
export const NATIVE_HOST_NAME = "com.pedelec.native_host";

/** Chrome refuses messages from a host larger than 1 MiB; stay well under it. */
export const MAX_NATIVE_MESSAGE_BYTES = 1024 * 1024;
export const NATIVE_CHUNK_BYTES = 768 * 1024;

/**
 * Extension → native host: Core request frames, but only the requests a page may cause (the session requests) and
 * the extension's own (revocations), each stamped with the origin. Requests meant for local programs (shutdown, ping,
 * an agent's toolSpec / toolCall / runScript) are refused here, so a compromised or confused extension cannot reach
 * them through the host. The extension never sends an attestation: the host makes one from `fullAccessClaim`.
 */
const { attestation: _attestation, ...frameShape } = coreRequestFrameSchema.shape;
export const extensionToHostMessageSchema = z.strictObject({
  ...frameShape,
  type: z.enum([...SESSION_REQUEST_TYPES, ...EXTENSION_TO_CORE_REQUEST_TYPES] as [string, ...string[]]),
  origin: pageOriginSchema,
  fullAccessClaim: z.optional(fullAccessClaimSchema),
});
export type ExtensionToHostMessage = z.infer<typeof extensionToHostMessageSchema>;

/** A piece of a message too large for one native message; reassembled by the receiver in index order. */
export const chunkFrameSchema = z.strictObject({
  kind: z.literal("chunk"),
  chunkId: z.string().min(1).max(64),
  index: z.number().int().min(0),
  count: z.number().int().min(2).max(4096),
  data: z.string(),
});
export type ChunkFrame = z.infer<typeof chunkFrameSchema>;

/** The host says hello once it runs, and tells when its link to Core changes. */
export const hostStatusFrameSchema = z.object({
  kind: z.literal("host-status"),
  version: z.string(),
  /**
   * The protocol version the host speaks (PROTOCOL_VERSION): the extension checks it on the first host-status and
   * drops a host it cannot talk to. Absent from a host older than the handshake (UNSTATED_PROTOCOL_VERSION).
   */
  protocolVersion: z.string().max(32).optional(),
  core: z.enum(["connecting", "connected", "unavailable"]),
  /**
   * With "connected" or "unavailable": whether this host started Core because none was running (a Core it only
   * connected to is false). Absent while connecting.
   */
  coreLaunched: z.boolean().optional(),
  error: wireErrorSchema.optional(),
});
export type HostStatusFrame = z.infer<typeof hostStatusFrameSchema>;

/** Native host → extension. Picked by `kind`: every event is checked once, against the event schema only. */
export const hostToExtensionMessageSchema = z.discriminatedUnion("kind", [
  coreResponseFrameSchema,
  coreEventFrameSchema,
  coreFatalFrameSchema,
  hostStatusFrameSchema,
  chunkFrameSchema,
]);
export type HostToExtensionMessage = z.infer<typeof hostToExtensionMessageSchema>;
