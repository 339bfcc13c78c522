import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

// The key file itself, apart from signing and digests: Core reads it before it listens, and needs no crypto for that.

/** The file under `PEDELEC_HOME/keys/` holding the key the native host signs Full Access admissions with. */
export const ATTESTATION_KEY_FILE = "full-access.key";
export const ATTESTATION_KEY_BYTES = 32;

/**
 * Reads the key Core generated; FULL_ACCESS_ATTESTATION_INVALID when it is missing or damaged. Synchronous: a 64-byte
 * file read once, by Core before it listens and by the native host when it first connects.
 */
export function readAttestationKey(keysDir: string): Buffer {
  let text: string;
  try {
    text = readFileSync(join(keysDir, ATTESTATION_KEY_FILE), "utf8");
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
