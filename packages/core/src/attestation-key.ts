import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ATTESTATION_KEY_BYTES, ATTESTATION_KEY_FILE, readAttestationKey } from "@pedelec/core-client/attestation-key";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { createPrivateFileExclusivelySync } from "./private-file-sync.js";

/**
 * Core's Full Access key, or why there is none. Without a usable key Core still runs (sandbox sessions need no key);
 * only Full Access is refused, with `error` (FULL_ACCESS_ATTESTATION_INVALID), and `pedelec doctor` names the fix.
 */
export type AttestationKeyState = { usable: true; key: Buffer } | { usable: false; error: PedelecError };

/**
 * Core's key: created once (0600 in a 0700 folder) and kept, so a native host started later can still sign. It is
 * written whole to a temporary file and linked into place (exclusive), so a crash mid-write never leaves a short key,
 * and a race with another Core is settled by whoever links first. A key that exists but is damaged (empty, short, not
 * hex) is NOT replaced: Core reports it and refuses Full Access until the user deletes it and restarts Core, because
 * a native host may still hold the old one and a silent new key would hide what happened. Synchronous, as all of
 * Core's start-up before it listens: nothing else runs yet.
 */
export function ensureAttestationKey(keysDir: string): AttestationKeyState {
  try {
    mkdirSync(keysDir, { recursive: true, mode: 0o700 });
    createPrivateFileExclusivelySync(join(keysDir, ATTESTATION_KEY_FILE), () => {
      // Loaded only when the key is made: reading it at every later start needs no crypto.
      const { randomBytes } = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
      return randomBytes(ATTESTATION_KEY_BYTES).toString("hex");
    });
    return { usable: true, key: readAttestationKey(keysDir) };
  } catch (error) {
    const coded = PedelecError.from(error, "FULL_ACCESS_ATTESTATION_INVALID", "the Full Access key cannot be prepared");
    const file = join(keysDir, ATTESTATION_KEY_FILE);
    return { usable: false, error: new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", `Full Access is off (${file}): ${coded.message}`) };
  }
}
