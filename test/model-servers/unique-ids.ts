import { randomBytes } from "node:crypto";

/**
 * A source of ids unique over a server's lifetime and, through a random part per source, across servers too: claude
 * drops a tool call whose id it has seen before in a resumed session's history, even from an earlier server.
 */
export function uniqueIds(): (prefix: string) => string {
  const source = randomBytes(6).toString("hex");
  let count = 0;
  return (prefix) => `${prefix}${source}${String(++count).padStart(4, "0")}`;
}
