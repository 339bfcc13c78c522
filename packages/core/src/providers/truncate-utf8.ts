const ELLIPSIS = "…";
const ELLIPSIS_BYTES = Buffer.byteLength(ELLIPSIS);

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes, ending in "…" when cut. Never splits a character.
 */
export function truncateUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, truncated: false };
  const bytes = Buffer.from(text, "utf8");
  let end = Math.max(0, maxBytes - ELLIPSIS_BYTES);
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return { text: bytes.subarray(0, end).toString("utf8") + ELLIPSIS, truncated: true };
}
