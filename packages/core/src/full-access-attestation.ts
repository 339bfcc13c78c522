import { createHmac, timingSafeEqual } from "node:crypto";
import type { FullAccessAttestation } from "@pedelec/protocol/full-access";

// Core's half of Full Access attestation: it makes the key and checks signatures. The digest, signing and key reading
// it shares with the native host live in @pedelec/core-client/full-access-attestation; Core makes the key in
// attestation-key.ts.

/** Constant-time check of an attestation's signature. */
export function signatureMatches(key: Buffer, attestation: FullAccessAttestation): boolean {
  const expected = createHmac("sha256", key).update(attestation.claims).digest();
  const given = Buffer.from(attestation.signature, "base64url");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
