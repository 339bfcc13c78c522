import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ATTESTATION_KEY_BYTES, ATTESTATION_KEY_FILE, readAttestationKey } from "@pedelec/core-client/attestation-key";

/**
 * Core's key: created once (0600 in a 0700 folder) and kept, so a native host started later can still sign.
 * Creation races with another Core are settled by the exclusive create. Synchronous, as all of Core's start-up before
 * it listens: nothing else runs yet, and each file step through the thread pool cost a wake-up.
 */
export function ensureAttestationKey(keysDir: string): Buffer {
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  const file = join(keysDir, ATTESTATION_KEY_FILE);
  try {
    const fd = openSync(file, "wx", 0o600);
    try {
      // Loaded only here, on the first start in a home: reading the key at every other start needs no crypto.
      const { randomBytes } = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
      writeSync(fd, randomBytes(ATTESTATION_KEY_BYTES).toString("hex"));
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return readAttestationKey(keysDir);
}
