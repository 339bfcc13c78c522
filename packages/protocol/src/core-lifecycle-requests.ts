// The requests about Core itself rather than a session, in a module of their own: Core answers them from the moment it
// listens, before it has loaded what sessions need. requests.ts lists them with the other local requests.
import { z } from "zod";

export const coreLifecycleRequestSchemas = {
  ping: {
    payload: z.strictObject({}),
    result: z.object({
      pid: z.number().int(),
      version: z.string(),
      home: z.string(),
      startedAt: z.string(),
      sessions: z.number().int().min(0),
      /**
       * The loopback port of the asset server, null until Core's background start has run it (or when it could not
       * start). `pedelec doctor` uses it to prove the server answers.
       */
      assetPort: z.number().int().min(1).max(65535).nullable().optional(),
    }),
  },
  shutdown: { payload: z.strictObject({}), result: z.object({ stopping: z.literal(true) }) },
} as const;
export type CoreLifecycleRequestType = keyof typeof coreLifecycleRequestSchemas;

export function isCoreLifecycleRequestType(type: string): type is CoreLifecycleRequestType {
  return Object.hasOwn(coreLifecycleRequestSchemas, type);
}
