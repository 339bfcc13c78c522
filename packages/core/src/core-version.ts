// The native host reports the same version, so it is defined where both reach it.
export { CORE_VERSION } from "@pedelec/core-client/core-version";
