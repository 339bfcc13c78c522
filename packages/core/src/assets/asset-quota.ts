import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { DEFAULT_RESOURCE_LIMITS, limitSettingKey, type LimitReachedDetails, type ResourceLimits } from "@pedelec/protocol/resource-limits";
import { freeDiskBytes, requireFreeSpace, type FreeBytesOf } from "../disk-space.js";
import { RUNTIME_DIR_NAME } from "../workspace.js";
import { isReservedName } from "./asset-location.js";

/** What the quota needs of Core: the limits in force, and where an origin's live sessions keep their assets. */
export interface AssetQuotaSource {
  limits(): Promise<ResourceLimits>;
  /** The workspace folders of `origin`'s live sessions. */
  workspacesOf(origin: string): readonly string[];
}

/** An upload about to be accepted: whose it is, where it goes, and how many bytes it brings. */
export interface UploadClaim {
  sessionId: string;
  origin: string;
  workspacePath: string;
  /** The file on disk the upload replaces or creates. */
  targetPath: string;
  bytes: number;
}

/** Limits from the defaults, and no other session's folders: for an AssetTransfers that runs without Core's sessions. */
export const DEFAULT_ASSET_QUOTA_SOURCE: AssetQuotaSource = { limits: async () => DEFAULT_RESOURCE_LIMITS, workspacesOf: () => [] };

/**
 * Bytes of the regular files in a workspace's assets folder. Symlinks are not followed and count nothing; Pedelec's
 * own temporary uploads are left out (an upload under way is counted by its declared size instead). A missing folder
 * holds nothing.
 */
export async function assetBytesIn(workspacePath: string): Promise<number> {
  let total = 0;
  const folders = [join(workspacePath, RUNTIME_DIR_NAME, "assets")];
  const root = await lstat(folders[0]!).catch(() => null);
  if (root === null || !root.isDirectory()) return 0;
  while (folders.length > 0) {
    const folder = folders.pop()!;
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (isReservedName(entry.name) || entry.isSymbolicLink()) continue;
      const absolute = join(folder, entry.name);
      if (entry.isDirectory()) folders.push(absolute);
      else if (entry.isFile()) total += (await lstat(absolute).catch(() => null))?.size ?? 0;
    }
  }
  return total;
}

/**
 * The per-session and per-origin asset quotas and the disk's free-space floor, checked when a page prepares an upload
 * and again when its body arrives. The second check and the upload's admission happen under one lock per origin, and
 * an admitted upload counts with its declared size until it ends, so uploads racing each other (from several sessions
 * of one origin) cannot all pass the limit.
 */
export class AssetQuota {
  /** Uploads admitted and not finished, by session (one at a time per session). */
  readonly #streaming = new Map<string, UploadClaim>();
  readonly #originTurns = new Map<string, Promise<unknown>>();

  constructor(
    private readonly source: AssetQuotaSource,
    private readonly freeBytesOf: FreeBytesOf = freeDiskBytes,
  ) {}

  /** Throws ASSET_QUOTA_EXCEEDED or DISK_SPACE_LOW when `claim` would not fit now. */
  async check(claim: UploadClaim): Promise<void> {
    const limits = await this.source.limits();
    const target = await lstat(claim.targetPath).catch(() => null);
    const replaced = target?.isFile() ? target.size : 0;
    const folders = [...new Set([claim.workspacePath, ...this.source.workspacesOf(claim.origin)])];
    const onDisk = await Promise.all(folders.map(assetBytesIn));
    const others = [...this.#streaming.values()].filter((other) => other.sessionId !== claim.sessionId);
    const streamed = (counts: (other: UploadClaim) => boolean): number => others.reduce((sum, other) => sum + (counts(other) ? other.bytes : 0), 0);

    const sessionUsed = onDisk[0]! + streamed((other) => other.workspacePath === claim.workspacePath);
    if (sessionUsed - replaced + claim.bytes > limits.assetBytesPerSession) {
      throw quotaExceeded("session", limits.assetBytesPerSession, sessionUsed, claim.bytes);
    }
    const originUsed = onDisk.reduce((sum, bytes) => sum + bytes, 0) + streamed((other) => other.origin === claim.origin);
    if (originUsed - replaced + claim.bytes > limits.assetBytesPerOrigin) {
      throw quotaExceeded("origin", limits.assetBytesPerOrigin, originUsed, claim.bytes);
    }
    await requireFreeSpace(claim.workspacePath, claim.bytes, limits.minFreeDiskBytes, `an upload of ${claim.bytes} bytes`, this.freeBytesOf);
  }

  /**
   * Checks `claim` again and counts it as streaming until the returned function is called (when the upload ends, in
   * success or not).
   */
  async admit(claim: UploadClaim): Promise<() => void> {
    await this.#inOriginTurn(claim.origin, async () => {
      await this.check(claim);
      this.#streaming.set(claim.sessionId, claim);
    });
    return () => {
      if (this.#streaming.get(claim.sessionId) === claim) this.#streaming.delete(claim.sessionId);
    };
  }

  /** Runs `work` after every earlier admission of the same origin has been decided. */
  async #inOriginTurn(origin: string, work: () => Promise<void>): Promise<void> {
    const before = this.#originTurns.get(origin) ?? Promise.resolve();
    const turn = before.then(work, work);
    const settled = turn.catch(() => undefined);
    this.#originTurns.set(origin, settled);
    try {
      await turn;
    } finally {
      if (this.#originTurns.get(origin) === settled) this.#originTurns.delete(origin);
    }
  }
}

function quotaExceeded(scope: LimitReachedDetails["scope"], limit: number, used: number, requested: number): PedelecError {
  const details: LimitReachedDetails = {
    limit,
    used,
    requested,
    scope,
    setting: limitSettingKey(scope === "session" ? "assetBytesPerSession" : "assetBytesPerOrigin"),
  };
  const holder = scope === "session" ? "this session's assets" : "the assets of this site's live sessions";
  return new PedelecError(
    "ASSET_QUOTA_EXCEEDED",
    `an upload of ${requested} bytes would take ${holder} past ${limit} bytes (${used} are used)`,
    details,
  );
}
