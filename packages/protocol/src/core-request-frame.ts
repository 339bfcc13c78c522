// The one frame Core reads from its clients, in a module of its own: Core checks every frame with it from its first
// connection on, before it has loaded the schemas of the requests themselves (see core-lifecycle-requests.ts). Built
// with lean-zod.ts, as everything it uses.
import * as z from "./lean-zod.js";
import { wirePayloadSchema } from "./wire-payload.js";
import { pageOriginSchema } from "./origin.js";
import { requestIdSchema } from "./request-id.js";
import { fullAccessAttestationSchema } from "./full-access.js";

/** Client (native host, pedelec-cli, pedelec) → Core. */
export const coreRequestFrameSchema = z.strictObject({
  kind: z.literal("request"),
  id: requestIdSchema,
  type: z.string().check(z.minLength(1), z.maxLength(64)),
  /** The page origin the extension stamped; present exactly for requests that came from a page. */
  origin: z.optional(pageOriginSchema),
  /** Bounded before any recursive schema sees it (MAX_WIRE_JSON_DEPTH, MAX_JSON_NODES). */
  payload: wirePayloadSchema,
  /** The native host's signed statement admitting this one request to Full Access. */
  attestation: z.optional(fullAccessAttestationSchema),
});
export type CoreRequestFrame = z.infer<typeof coreRequestFrameSchema>;
