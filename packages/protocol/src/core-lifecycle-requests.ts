// The requests about Core itself rather than a session, in a module of their own: Core answers them from the moment it
// listens, before it has loaded what sessions need (so they are built with lean-zod.ts). requests.ts lists them with
// the other local requests.
import * as z from "./lean-zod.js";
import { PROTOCOL_PARTS } from "./protocol-version.js";

const count = z.int().check(z.minimum(0));

export const coreLifecycleRequestSchemas = {
  /**
   * A client's first request on a connection (the native host's): the protocol version it speaks and which part it is.
   * Core answers with its own version, or, when the two cannot talk, fails it with PROTOCOL_VERSION_MISMATCH and closes
   * the connection before it reads anything more. A client that never says hello is served as before.
   */
  hello: {
    payload: z.strictObject({
      protocolVersion: z.string().check(z.minLength(1), z.maxLength(32)),
      part: z.enum(PROTOCOL_PARTS),
    }),
    result: z.object({ protocolVersion: z.string().check(z.maxLength(32)) }),
  },
  ping: {
    payload: z.strictObject({}),
    result: z.object({
      pid: z.int(),
      version: z.string(),
      home: z.string(),
      startedAt: z.string(),
      sessions: count,
      /**
       * The loopback port of the asset server, null until Core's background start has run it (or when it could not
       * start). `pedelec doctor` uses it to prove the server answers.
       */
      assetPort: z.optional(z.nullable(z.int().check(z.minimum(1), z.maximum(65535)))),
    }),
  },
  shutdown: { payload: z.strictObject({}), result: z.object({ stopping: z.literal(true) }) },
} as const;
export type CoreLifecycleRequestType = keyof typeof coreLifecycleRequestSchemas;

export function isCoreLifecycleRequestType(type: string): type is CoreLifecycleRequestType {
  return Object.hasOwn(coreLifecycleRequestSchemas, type);
}
