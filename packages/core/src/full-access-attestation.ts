import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import type { FullAccessAttestation } from "@pedelec/protocol/full-access";
import { ATTESTATION_KEY_BYTES, ATTESTATION_KEY_FILE, readAttestationKey } from "@pedelec/core-client/full-access-attestation";

// Core's half of Full Access attestation: it makes the key and checks signatures. The digest, signing and key reading
// it shares with the native host live in @pedelec/core-client/full-access-attestation.

/** Constant-time check of an attestation's signature. */
export function signatureMatches(key: Buffer, attestation: FullAccessAttestation): boolean {
  const expected = createHmac("sha256", key).update(attestation.claims).digest();
  const given = Buffer.from(attestation.signature, "base64url");
  return given.length === expected.length && timingSafeEqual(given, expected);
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
      await handle.writeFile(randomBytes(ATTESTATION_KEY_BYTES).toString("hex"));
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return readAttestationKey(keysDir);
}
