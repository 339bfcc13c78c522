import { createHash, createHmac, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import canonicalize from "canonicalize";
import type { AttestationClaims, FullAccessAttestation } from "@pedelec/protocol/full-access";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/**
 * The half of Full Access attestation both sides share: the native host signs an admission with the key Core keeps
 * under `PEDELEC_HOME/keys/`, over a digest of the exact request; Core creates the key and checks the signature.
 */

/** The file under `PEDELEC_HOME/keys/` holding the key the native host signs Full Access admissions with. */
export const ATTESTATION_KEY_FILE = "full-access.key";
export const ATTESTATION_KEY_BYTES = 32;

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

/** Reads the key Core generated; FULL_ACCESS_ATTESTATION_INVALID when it is missing or damaged. */
export async function readAttestationKey(keysDir: string): Promise<Buffer> {
  let text: string;
  try {
    text = await readFile(join(keysDir, ATTESTATION_KEY_FILE), "utf8");
  } catch (error) {
    throw new PedelecError(
      "FULL_ACCESS_ATTESTATION_INVALID",
      `the Full Access key in ${keysDir} cannot be read (${(error as Error).message}); restart Pedelec Core to create it`,
    );
  }
  const key = Buffer.from(text.trim(), "hex");
  if (key.length !== ATTESTATION_KEY_BYTES) {
    throw new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", `the Full Access key in ${keysDir} is damaged; delete it and restart Pedelec Core`);
  }
  return key;
}
