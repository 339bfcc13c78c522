import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import canonicalize from "canonicalize";
import type { AttestationClaims, FullAccessAttestation } from "@pedelec/protocol/full-access";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/** The file under `PEDELEC_HOME/keys/` holding the key the native host signs Full Access admissions with. */
export const ATTESTATION_KEY_FILE = "full-access.key";
const KEY_BYTES = 32;

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

/** Constant-time check of an attestation's signature. */
export function signatureMatches(key: Buffer, attestation: FullAccessAttestation): boolean {
  const expected = createHmac("sha256", key).update(attestation.claims).digest();
  const given = Buffer.from(attestation.signature, "base64url");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function newNonce(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * Core's key: created once (0600 in a 0700 folder) and kept, so a native host started later can still sign.
 * Creation races with another Core are settled by the exclusive create.
 */
export async function ensureAttestationKey(keysDir: string): Promise<Buffer> {
  await mkdir(keysDir, { recursive: true, mode: 0o700 });
  const file = join(keysDir, ATTESTATION_KEY_FILE);
  try {
    const handle = await open(file, "wx", 0o600);
    try {
      await handle.writeFile(randomBytes(KEY_BYTES).toString("hex"));
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return readAttestationKey(keysDir);
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
  if (key.length !== KEY_BYTES) {
    throw new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", `the Full Access key in ${keysDir} is damaged; delete it and restart Pedelec Core`);
  }
  return key;
}
