import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A session's secret for agent-facing commands, and the digest Core keeps to check it. */
export interface ThreadCapability {
  /** 256 random bits, base64url: handed only to the session's provider processes, through their environment. */
  secret: string;
  digest: Buffer;
}

export function issueThreadCapability(): ThreadCapability {
  const secret = randomBytes(32).toString("base64url");
  return { secret, digest: digestOf(secret) };
}

// Compared against when the thread does not exist, so an unknown thread costs the same as a wrong secret.
const DECOY_DIGEST = digestOf(randomBytes(32).toString("base64url"));

/**
 * Whether `presented` is the secret behind `digest`. Both sides are hashed to a fixed length first, so the
 * comparison takes the same time whatever the input's length or where it differs.
 */
export function capabilityMatches(digest: Buffer | undefined, presented: string): boolean {
  const equal = timingSafeEqual(digest ?? DECOY_DIGEST, digestOf(presented));
  return equal && digest !== undefined;
}

function digestOf(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}
