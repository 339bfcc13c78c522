/**
 * The id of the development build of the Pedelec extension, fixed by the `key` in its manifest
 * (sha256 of the key's DER, first 32 hex digits mapped 0-f → a-p). A test checks the two agree.
 */
export const DEFAULT_EXTENSION_ID = "jipdjobnmfeagcdooiopbbkmbpgbkdhe";
