import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { ATTESTATION_KEY_BYTES, ATTESTATION_KEY_FILE, readAttestationKey } from "@pedelec/core-client/attestation-key";

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
      // Loaded only here, on the first start in a home: reading the key at every other start needs no crypto.
      const { randomBytes } = await import("node:crypto");
      await handle.writeFile(randomBytes(ATTESTATION_KEY_BYTES).toString("hex"));
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return readAttestationKey(keysDir);
}
