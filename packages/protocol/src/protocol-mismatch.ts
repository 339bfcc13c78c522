import { PedelecError } from "./pedelec-error.js";
import { areCompatibleProtocolVersions, outdatedPeer, type ProtocolPart, type ProtocolPeer } from "./protocol-version.js";

/** What a PROTOCOL_VERSION_MISMATCH carries: the part to update, the version it needs and the one it has. */
export interface ProtocolVersionMismatchDetails {
  part: ProtocolPart;
  expected: string;
  actual: string;
}

const PART_NAMES: Readonly<Record<ProtocolPart, string>> = {
  sdk: "the page's Pedelec SDK",
  extension: "the Pedelec extension",
  "native-host": "the Pedelec native host",
  core: "Pedelec Core",
};

/**
 * Checks the version a peer stated against this side's: undefined when they can talk, else the
 * PROTOCOL_VERSION_MISMATCH that names the part to update (the older one) and both versions.
 */
export function protocolVersionMismatch(local: ProtocolPeer, remote: ProtocolPeer): PedelecError | undefined {
  if (areCompatibleProtocolVersions(local.version, remote.version)) return undefined;
  const { outdated, current } = outdatedPeer(local, remote);
  const details: ProtocolVersionMismatchDetails = { part: outdated.part, expected: current.version, actual: outdated.version };
  return new PedelecError(
    "PROTOCOL_VERSION_MISMATCH",
    `${PART_NAMES[outdated.part]} speaks protocol ${outdated.version}, but ${PART_NAMES[current.part]} speaks ${current.version}: update ${PART_NAMES[outdated.part]}`,
    details,
  );
}
