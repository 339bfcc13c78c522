/**
 * Reads a whole stream as strict UTF-8 (invalid bytes are an error, never U+FFFD), stopping with an error as soon as it
 * passes `maxBytes` instead of holding whatever a caller pipes in.
 */
export async function readUtf8Stream(stream: AsyncIterable<Buffer | string>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    total += bytes.length;
    if (total > maxBytes) throw new Error(`more than ${maxBytes} bytes`);
    chunks.push(bytes);
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
}
