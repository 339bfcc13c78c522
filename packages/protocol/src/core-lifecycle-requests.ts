// The requests about Core itself rather than a session, in a module of their own: Core answers them from the moment it
// listens, before it has loaded what sessions need (so they are built with lean-zod.ts). requests.ts lists them with
// the other local requests.
import * as z from "./lean-zod.js";

const count = z.int().check(z.minimum(0));

export const coreLifecycleRequestSchemas = {
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
