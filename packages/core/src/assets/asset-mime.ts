import { createRequire } from "node:module";
import type * as MimeTypes from "mime-types";

// The media-type table is large and only downloads need it: loaded on the first one, not at Core's start.
let mimeTypes: typeof MimeTypes | undefined;

/** The media type a download is served with, from the file name's extension; unknown → application/octet-stream. */
export function mimeTypeOf(assetPath: string): string {
  mimeTypes ??= createRequire(import.meta.url)("mime-types") as typeof MimeTypes;
  return mimeTypes.lookup(assetPath) || "application/octet-stream";
}
