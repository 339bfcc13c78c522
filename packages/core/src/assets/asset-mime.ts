import { lookup } from "mime-types";

/** The media type a download is served with, from the file name's extension; unknown → application/octet-stream. */
export function mimeTypeOf(assetPath: string): string {
  return lookup(assetPath) || "application/octet-stream";
}
