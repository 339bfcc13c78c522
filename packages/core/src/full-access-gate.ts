import type { CoreRequestFrame } from "@pedelec/protocol/core-wire";
import { attestationClaimsSchema, type AttestationClaims } from "@pedelec/protocol/full-access";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { requestDigest } from "@pedelec/core-client/full-access-attestation";
import { signatureMatches } from "./full-access-attestation.js";

/** How far an attestation's issue time may lie in Core's future (clock steps between two local processes). */
const CLOCK_SKEW_MS = 5_000;

/**
 * Admits a request to Full Access only with a valid attestation from the native host: signed with Core's key, for
 * this very request and origin, not expired, never seen before, for a grant the extension has not since revoked.
 */
export class FullAccessGate {
  /** Nonces seen, until their attestation expires (after that the expiry check refuses them anyway). */
  readonly #seenNonces = new Map<string, number>();
  /** Origin → when the extension last revoked its Full Access; older grants are dead. */
  readonly #revokedAt = new Map<string, number>();

  /** `key` is Core's key, or, when it is not usable, why: then every admission is refused with that error. */
  constructor(
    private readonly key: Buffer | PedelecError,
    private readonly now: () => number = Date.now,
  ) {}

  /** The verified claims, or a coded refusal. */
  admit(frame: CoreRequestFrame, payload: unknown): AttestationClaims {
    // Nothing can be verified without the key; saying so is clearer than any other refusal.
    if (this.key instanceof PedelecError) throw new PedelecError(this.key.code, this.key.message);
    const origin = frame.origin;
    if (origin === undefined || frame.attestation === undefined) {
      throw new PedelecError(
        "FULL_ACCESS_NOT_GRANTED",
        `Full Access is not granted to ${origin ?? "this caller"}; the user grants it in the Pedelec extension's options`,
      );
    }
    if (!signatureMatches(this.key, frame.attestation)) {
      throw new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", "the Full Access attestation is not signed with this Core's key");
    }
    let claims: AttestationClaims;
    try {
      claims = attestationClaimsSchema.parse(JSON.parse(frame.attestation.claims));
    } catch {
      throw new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", "the Full Access attestation's claims are malformed");
    }
    if (claims.origin !== origin) {
      throw new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", `the Full Access attestation is for ${claims.origin}, not ${origin}`);
    }
    if (claims.requestDigest !== requestDigest({ type: frame.type, origin, payload })) {
      throw new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", "the Full Access attestation was made for a different request");
    }
    const now = this.now();
    if (claims.issuedAt > now + CLOCK_SKEW_MS || claims.expiresAt < claims.issuedAt) {
      throw new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", "the Full Access attestation's times are not plausible");
    }
    if (claims.expiresAt <= now) {
      throw new PedelecError("FULL_ACCESS_ATTESTATION_EXPIRED", `the Full Access attestation expired ${now - claims.expiresAt} ms ago`);
    }
    this.#forgetExpiredNonces(now);
    if (this.#seenNonces.has(claims.nonce)) {
      throw new PedelecError("FULL_ACCESS_ATTESTATION_REPLAYED", "this Full Access attestation was already used");
    }
    this.#seenNonces.set(claims.nonce, claims.expiresAt);
    const revokedAt = this.#revokedAt.get(origin);
    if (revokedAt !== undefined && claims.fullAccessGrantedAt <= revokedAt) {
      throw new PedelecError("FULL_ACCESS_NOT_GRANTED", `Full Access for ${origin} was revoked`);
    }
    if (claims.fullAccessGrantedAt < claims.approvalGrantedAt) {
      throw new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", "the Full Access grant predates the origin's approval");
    }
    return claims;
  }

  /** The extension revoked the origin's Full Access at `revokedAt`: any grant from before then is refused. */
  revoke(origin: string, revokedAt: number): void {
    this.#revokedAt.set(origin, Math.max(revokedAt, this.#revokedAt.get(origin) ?? 0));
  }

  #forgetExpiredNonces(now: number): void {
    for (const [nonce, expiresAt] of this.#seenNonces) if (expiresAt <= now) this.#seenNonces.delete(nonce);
  }
}
