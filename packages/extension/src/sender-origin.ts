import type { PortSender } from "./page-port.js";

/**
 * The caller's origin as the browser reported it. `sender.origin` wins; the URL is only a fallback for browsers
 * that leave `origin` out. An opaque origin ("null", e.g. a sandboxed frame) counts as unknown and is not
 * replaced by the frame's URL, which would hand the frame an origin it does not have.
 */
export function resolveSenderOrigin(sender: PortSender | undefined): string | undefined {
  if (sender === undefined) return undefined;
  if (sender.origin !== undefined) {
    return sender.origin === "" || sender.origin === "null" ? undefined : sender.origin;
  }
  if (sender.url === undefined) return undefined;
  try {
    const origin = new URL(sender.url).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}
