/** A piece of a remedy: plain text, or a command to show as code. */
export interface RemedyPart {
  text: string;
  command: boolean;
}

/** Splits a remedy at its backticks: "Run `codex login`, then…" → text, command, text. Empty pieces are dropped. */
export function textWithCommands(remedy: string): RemedyPart[] {
  return remedy
    .split("`")
    .map((text, index) => ({ text, command: index % 2 === 1 }))
    .filter((part) => part.text !== "");
}
