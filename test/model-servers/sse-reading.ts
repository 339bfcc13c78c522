/** One frame read back from an SSE body: its `event:` value (if any) and its `data:` text. */
export interface ReadSseFrame {
  event: string | undefined;
  data: string;
}

/** Splits an SSE body into frames; every frame must be `event:`/`data:` lines ended by a blank line. */
export function readSseFrames(body: string): ReadSseFrame[] {
  if (body !== "" && !body.endsWith("\n\n")) throw new Error(`the SSE body does not end with a blank line: ${JSON.stringify(body.slice(-80))}`);
  return body
    .split("\n\n")
    .filter((frame) => frame !== "")
    .map((frame) => {
      const lines = frame.split("\n");
      const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
      const unknown = lines.filter((line) => !line.startsWith("event: ") && !line.startsWith("data: "));
      if (unknown.length > 0) throw new Error(`unexpected SSE lines ${JSON.stringify(unknown)}`);
      const data = field("data");
      if (data === undefined) throw new Error(`an SSE frame without data: ${JSON.stringify(frame)}`);
      return { event: field("event"), data };
    });
}

/** Reads a streamed body chunk by chunk until it ends or breaks, returning what arrived and how it ended. */
export async function readUntilEndOrBreak(response: Response): Promise<{ text: string; broke: boolean }> {
  const reader = response.body?.getReader();
  if (reader === undefined) return { text: "", broke: false };
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, broke: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, broke: true };
  }
}
