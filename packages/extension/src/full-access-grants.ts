import { z } from "zod";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ApprovalStore } from "./approval-store.js";
import type { KeyValueStorage } from "./key-value-storage.js";
import { ownValue, withKey, withoutKey } from "./own-record.js";
import { randomBase64Url } from "./random-id.js";
import { StoredValue } from "./stored-value.js";

/** The `chrome.storage.local` key holding the Full Access grants, origin → grant. */
export const FULL_ACCESS_GRANTS_KEY = "fullAccessGrants";

/** One grant of Full Access to one origin. A new grant after a revocation has a new id. */
export interface FullAccessGrant {
  /** Random, base64url; names this grant in the claims the native host attests. */
  grantId: string;
  /** When the user granted it (ms since the epoch). */
  grantedAt: number;
}

const grantsSchema = z.record(
  z.string(),
  z.strictObject({ grantId: z.string().regex(/^[A-Za-z0-9_-]{22,64}$/), grantedAt: z.number().int().min(0) }),
);

export interface FullAccessGrantStoreOptions {
  now?: () => number;
  createGrantId?: () => string;
}

/**
 * The origins the user granted Full Access, only ever from the options page. A grant needs the origin's approval;
 * revoking goes through FullAccessRevocations, which also tells Core.
 */
export class FullAccessGrantStore {
  readonly #grants: StoredValue<Record<string, FullAccessGrant>>;
  readonly #now: () => number;
  readonly #createGrantId: () => string;

  constructor(
    storage: KeyValueStorage,
    private readonly approvedOrigins: ApprovalStore,
    options: FullAccessGrantStoreOptions = {},
  ) {
    this.#grants = new StoredValue(storage, FULL_ACCESS_GRANTS_KEY, grantsSchema, () => ({}), "the Full Access grants");
    this.#now = options.now ?? Date.now;
    this.#createGrantId = options.createGrantId ?? (() => randomBase64Url(24));
  }

  list(): Promise<Record<string, FullAccessGrant>> {
    return this.#grants.read();
  }

  /** The origin's grant, if it has one and is still approved (a grant outliving its approval is not trusted). */
  async grantFor(origin: string): Promise<FullAccessGrant | undefined> {
    const grant = ownValue(await this.list(), origin);
    return grant !== undefined && (await this.approvedOrigins.isApproved(origin)) ? grant : undefined;
  }

  /** Grants Full Access to an approved origin (CREATE_SESSION_NOT_APPROVED otherwise); a granted origin keeps its grant. */
  async grant(origin: string): Promise<FullAccessGrant> {
    // approvedAt also gives an origin approved before times were kept its time now, so approval never follows the grant.
    if ((await this.approvedOrigins.approvedAt(origin)) === undefined) {
      throw new PedelecError("CREATE_SESSION_NOT_APPROVED", `${origin} is not approved; approve it before granting Full Access`);
    }
    await this.#grants.update((grants) =>
      ownValue(grants, origin) !== undefined ? grants : withKey(grants, origin, { grantId: this.#createGrantId(), grantedAt: this.#now() }),
    );
    const granted = ownValue(await this.list(), origin);
    if (granted === undefined) throw new PedelecError("STORAGE_ERROR", "the Full Access grant was not kept by storage");
    return granted;
  }

  /** Drops the origin's grant. Resolves true when there was one. */
  async revoke(origin: string): Promise<boolean> {
    let had = false;
    await this.#grants.update((grants) => {
      had = ownValue(grants, origin) !== undefined;
      return had ? withoutKey(grants, origin) : grants;
    });
    return had;
  }
}
