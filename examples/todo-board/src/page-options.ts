/** Chrome extension ids: 32 letters from a to p. */
const EXTENSION_ID_PATTERN = /^[a-p]{32}$/;

export interface PageOptions {
  /** From `?extensionId=`; undefined means the SDK's default extension. */
  extensionId: string | undefined;
  /** Why a given `extensionId` was ignored, for the page to show. */
  problem: string | undefined;
}

/** Reads the page's URL query; a malformed extension id is reported rather than sent to Chrome. */
export function readPageOptions(search: string): PageOptions {
  const value = new URLSearchParams(search).get("extensionId");
  if (value === null || value === "") return { extensionId: undefined, problem: undefined };
  if (!EXTENSION_ID_PATTERN.test(value)) {
    return {
      extensionId: undefined,
      problem: `Ignoring ?extensionId=${value}: an extension id is 32 letters from a to p; using the default extension`,
    };
  }
  return { extensionId: value, problem: undefined };
}
