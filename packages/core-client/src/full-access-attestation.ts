import { createHash, createHmac, randomBytes } from "node:crypto";
import canonicalize from "canonicalize";
import type { AttestationClaims, FullAccessAttestation } from "@pedelec/protocol/full-access";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/**
 * The half of Full Access attestation both sides share: the native host signs an admission with the key Core keeps
 * under `PEDELEC_HOME/keys/`, over a digest of the exact request; Core creates the key and checks the signature.
 */

export { ATTESTATION_KEY_BYTES, ATTESTATION_KEY_FILE, readAttestationKey } from "./attestation-key.js";

/** What an attestation is bound to: the exact request it admits. */
export interface AttestedRequest {
  type: string;
  origin: string;
  payload: unknown;
}

/** sha256 (hex) of the RFC 8785 canonical JSON of the request, so both ends agree whatever the key order. */
export function requestDigest(request: AttestedRequest): string {
  const text = canonicalize({ type: request.type, origin: request.origin, payload: request.payload });
  if (text === undefined) throw new PedelecError("INVALID_INPUT", "the request cannot be serialised for attestation");
  return createHash("sha256").update(text).digest("hex");
}

export function signClaims(key: Buffer, claims: AttestationClaims): FullAccessAttestation {
  const text = JSON.stringify(claims);
  return { claims: text, signature: createHmac("sha256", key).update(text).digest("base64url") };
}

export function newNonce(): string {
  return randomBytes(24).toString("base64url");
}
