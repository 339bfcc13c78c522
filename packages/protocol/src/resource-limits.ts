import { PedelecError } from "./pedelec-error.js";

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/**
 * What one approved origin may hold at once, and how full Core lets a disk get. Each is a setting (`limits.<name>` in
 * settings.json, `npx pedelec config set limits.<name> <value>`); these are the defaults.
 */
export const DEFAULT_RESOURCE_LIMITS = {
  /** Sessions of one origin that have not ended; creating one more is SESSION_LIMIT_REACHED. */
  liveSessionsPerOrigin: 50,
  /** Bytes in one session's assets folder; an upload that would pass it is ASSET_QUOTA_EXCEEDED. */
  assetBytesPerSession: GIB,
  /** Bytes in the assets folders of all of one origin's live sessions together. */
  assetBytesPerOrigin: 2 * GIB,
  /** Free bytes an upload or a script's writes must leave on the workspace's disk; below it is DISK_SPACE_LOW. */
  minFreeDiskBytes: GIB,
} as const;

export type ResourceLimitName = keyof typeof DEFAULT_RESOURCE_LIMITS;
export type ResourceLimits = { readonly [Name in ResourceLimitName]: number };

/** The smallest and largest value each limit may be set to. */
export const RESOURCE_LIMIT_BOUNDS: Readonly<Record<ResourceLimitName, { min: number; max: number }>> = {
  liveSessionsPerOrigin: { min: 1, max: 10_000 },
  assetBytesPerSession: { min: MIB, max: Number.MAX_SAFE_INTEGER },
  assetBytesPerOrigin: { min: MIB, max: Number.MAX_SAFE_INTEGER },
  minFreeDiskBytes: { min: 0, max: Number.MAX_SAFE_INTEGER },
};

export const RESOURCE_LIMIT_NAMES = Object.keys(DEFAULT_RESOURCE_LIMITS) as ResourceLimitName[];

/** The settings key a limit is changed with, as the error details and remedies name it. */
export function limitSettingKey(name: ResourceLimitName): `limits.${ResourceLimitName}` {
  return `limits.${name}`;
}

/**
 * `details` of SESSION_LIMIT_REACHED and ASSET_QUOTA_EXCEEDED: the limit in force, what is used now, what the refused
 * request asked for, and the setting that changes the limit.
 *
 * @example
 * ```ts
 * if (error.code === "ASSET_QUOTA_EXCEEDED") {
 *   const { limit, used } = error.details as LimitReachedDetails;
 *   notice.textContent = `This site may keep ${limit} bytes of files; ${used} are used.`;
 * }
 * ```
 */
export interface LimitReachedDetails {
  /** The limit in force: sessions, or bytes for the asset quotas. */
  limit: number;
  /** What the origin or the session holds now, in the same unit. */
  used: number;
  /** What the refused request would have added: 1 session, or the upload's bytes. */
  requested: number;
  /** Whose limit it is: the origin's (all its live sessions) or one session's. */
  scope: "origin" | "session";
  /** The settings key that changes the limit, e.g. `limits.liveSessionsPerOrigin`. */
  setting: string;
}

/** `details` of DISK_SPACE_LOW: the free space Pedelec keeps on the workspace's disk, and what is free now. */
export interface DiskSpaceLowDetails {
  /** The floor: bytes that must stay free. */
  limit: number;
  /** Bytes free now on the disk that holds the workspace. */
  free: number;
  /** What the refused work would have written; 0 for a script, whose writes are not known ahead. */
  requested: number;
  /** The settings key that changes the floor, `limits.minFreeDiskBytes`. */
  setting: string;
}

/** SESSION_LIMIT_REACHED for `origin`, which has `used` live sessions of the `limit` it may have. */
export function sessionLimitReached(origin: string, limit: number, used: number): PedelecError {
  const details: LimitReachedDetails = { limit, used, requested: 1, scope: "origin", setting: limitSettingKey("liveSessionsPerOrigin") };
  return new PedelecError("SESSION_LIMIT_REACHED", `${origin} already has ${used} live sessions, the most one site may have`, details);
}
