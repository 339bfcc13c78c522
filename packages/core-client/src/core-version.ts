/** Reported by Core and the native host; bumped with the wire protocol. */
export const CORE_VERSION = "0.1.0";
