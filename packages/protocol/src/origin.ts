import * as z from "./lean-zod.js";

/**
 * Origins a page may call Pedelec from: any https origin, and http on localhost or 127.0.0.1 (any port).
 * The extension reads the origin from the connecting port's sender, never from a payload.
 */
export function isAllowedPageOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin !== origin) return false;
  if (url.protocol === "https:") return url.hostname.length > 0;
  if (url.protocol === "http:") return url.hostname === "localhost" || url.hostname === "127.0.0.1";
  return false;
}

export const pageOriginSchema = z.string().check(z.refine(isAllowedPageOrigin, "is not an origin Pedelec accepts"));
