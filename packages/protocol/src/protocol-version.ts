// The version of the wire protocol the parts of Pedelec speak to each other, and the rule for which versions can talk.
// A part states its version when it connects (docs/architecture/transports.md, "Protocol version").

/**
 * The protocol version of this build, `major.minor`. The minor grows with additions an older peer can ignore (an
 * optional field, a new request it never makes); the major grows with anything an older peer would misread.
 */
export const PROTOCOL_VERSION = "1.0";

/**
 * What a part that states no version speaks: the parts built before the handshake, whose wire is protocol 1.0. A peer
 * stays compatible with them for as long as the major is 1.
 */
export const UNSTATED_PROTOCOL_VERSION = "1.0";

/** The parts that meet across a process or browser boundary, each updated on its own. */
export const PROTOCOL_PARTS = ["sdk", "extension", "native-host", "core"] as const;
export type ProtocolPart = (typeof PROTOCOL_PARTS)[number];

/** `major.minor`, each a number without leading zeros. */
export const PROTOCOL_VERSION_PATTERN = /^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})$/;

/** One side of a connection: which part, speaking which version. */
export interface ProtocolPeer {
  readonly part: ProtocolPart;
  readonly version: string;
}

/** The major of a well-formed version, or undefined for anything else. */
export function protocolMajor(version: string): number | undefined {
  const match = PROTOCOL_VERSION_PATTERN.exec(version);
  return match === null ? undefined : Number(match[1]);
}

/** Two versions can talk when both are well formed and their majors are equal; the minor never matters. */
export function areCompatibleProtocolVersions(first: string, second: string): boolean {
  const major = protocolMajor(first);
  return major !== undefined && major === protocolMajor(second);
}

/**
 * Of two incompatible peers, the one to update: the one with the lower major (an unreadable version counts as
 * lowest), or `remote` when both are unreadable, since this side at least knows its own version.
 */
export function outdatedPeer(local: ProtocolPeer, remote: ProtocolPeer): { outdated: ProtocolPeer; current: ProtocolPeer } {
  const localMajor = protocolMajor(local.version) ?? -1;
  const remoteMajor = protocolMajor(remote.version) ?? -1;
  return localMajor < remoteMajor ? { outdated: local, current: remote } : { outdated: remote, current: local };
}
