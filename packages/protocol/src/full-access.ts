import * as z from "./lean-zod.js";
import { pageOriginSchema } from "./origin.js";

/** How long a native host attestation stays valid. */
export const ATTESTATION_TTL_MS = 30_000;

/**
 * What the extension tells the native host when it forwards a request that asks for Full Access: which install of
 * the extension it is and when the user granted approval and Full Access to the origin. The page never supplies it.
 */
export const fullAccessClaimSchema = z.strictObject({
  /** Random per install of the extension, kept in its storage. */
  instanceId: z.string().check(z.regex(/^[A-Za-z0-9_-]{16,64}$/)),
  approvalGrantedAt: z.int().check(z.minimum(0)),
  fullAccessGrantId: z.string().check(z.regex(/^[A-Za-z0-9_-]{16,64}$/)),
  fullAccessGrantedAt: z.int().check(z.minimum(0)),
});
export type FullAccessClaim = z.infer<typeof fullAccessClaimSchema>;

/** The statement the native host signs for one Full Access admission. */
export const attestationClaimsSchema = z.strictObject({
  version: z.literal(1),
  origin: pageOriginSchema,
  /** The extension Chrome started the host for (`chrome-extension://<id>/`, from the host's own argv). */
  extensionOrigin: z.string().check(z.regex(/^chrome-extension:\/\/[a-p]{32}\/$/)),
  instanceId: fullAccessClaimSchema.shape.instanceId,
  approvalGrantedAt: z.int().check(z.minimum(0)),
  fullAccessGrantId: fullAccessClaimSchema.shape.fullAccessGrantId,
  fullAccessGrantedAt: z.int().check(z.minimum(0)),
  /** sha256 (hex) of the RFC 8785 canonical JSON of `{ type, origin, payload }` of the request it admits. */
  requestDigest: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  nonce: z.string().check(z.regex(/^[A-Za-z0-9_-]{22,64}$/)),
  issuedAt: z.int().check(z.minimum(0)),
  expiresAt: z.int().check(z.minimum(0)),
});
export type AttestationClaims = z.infer<typeof attestationClaimsSchema>;

/** Attached by the native host to the request frame it admits: the claims as JSON text and their HMAC-SHA256. */
export const fullAccessAttestationSchema = z.strictObject({
  claims: z.string().check(z.minLength(1), z.maxLength(4096)),
  /** base64url HMAC-SHA256 of `claims` under the key Core generated. */
  signature: z.string().check(z.regex(/^[A-Za-z0-9_-]{43}$/)),
});
export type FullAccessAttestation = z.infer<typeof fullAccessAttestationSchema>;
