import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { readUtf8Stream } from "./read-utf8-stream.js";

/** The most `pedelec config set <key> -` reads from stdin. */
const MAX_STDIN_VALUE_BYTES = 64 * 1024;

/** What `config set <key> -` reads: a pipe, or a terminal (which it puts in raw mode to read without echo). */
export interface ValueInput extends AsyncIterable<Buffer | string> {
  isTTY?: boolean;
  setRawMode?: (raw: boolean) => unknown;
  on?: (event: "data", listener: (chunk: Buffer | string) => void) => unknown;
  off?: (event: "data", listener: (chunk: Buffer | string) => void) => unknown;
  resume?: () => unknown;
  pause?: () => unknown;
}

/**
 * The value of `pedelec config set <key> -`, from stdin, so that a secret never goes on a command line (where `ps`
 * shows it to every local user and npx writes it to ~/.npm/_logs). From a pipe: everything, less one final line
 * ending. From a terminal: one line typed after a prompt on stderr, not echoed when `hidden`. An empty value is refused
 * (an empty argument, `''`, is how a key is reset).
 */
export async function readConfigValue(input: ValueInput, key: string, hidden: boolean, prompt: (text: string) => void): Promise<string> {
  let value: string;
  if (input.isTTY === true && input.setRawMode !== undefined && input.on !== undefined) {
    prompt(`${key}${hidden ? " (not shown as you type)" : ""}: `);
    value = await readTerminalLine(input, !hidden, prompt);
  } else {
    let text: string;
    try {
      text = await readUtf8Stream(input, MAX_STDIN_VALUE_BYTES);
    } catch (error) {
      throw new PedelecError(
        "INVALID_INPUT",
        `could not read ${key} from stdin: ${(error as Error).message} (at most ${MAX_STDIN_VALUE_BYTES} bytes of UTF-8)`,
      );
    }
    value = text.replace(/\r?\n$/, "");
  }
  if (value === "") {
    throw new PedelecError("INVALID_INPUT", `no value for ${key} on stdin; to reset it, run: pedelec config set ${key} ''`);
  }
  return value;
}

/** One line from a terminal in raw mode: Enter ends it, Backspace edits it, Ctrl+C or Ctrl+D before any text stops. */
function readTerminalLine(input: ValueInput, echo: boolean, write: (text: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let line = "";
    const finish = (outcome: () => void): void => {
      input.off?.("data", onData);
      input.setRawMode?.(false);
      input.pause?.();
      write("\n");
      outcome();
    };
    const onData = (chunk: Buffer | string): void => {
      for (const character of typeof chunk === "string" ? chunk : chunk.toString("utf8")) {
        if (character === "\r" || character === "\n") {
          finish(() => resolve(line));
          return;
        }
        if (character === "\u0003" || (character === "\u0004" && line === "")) {
          finish(() => reject(new PedelecError("INVALID_INPUT", "cancelled; nothing was changed")));
          return;
        }
        if (character === "\u007f" || character === "\b") {
          if (line.length > 0 && echo) write("\b \b");
          line = [...line].slice(0, -1).join("");
        } else if (character >= " ") {
          line += character;
          if (echo) write(character);
        }
      }
    };
    input.setRawMode?.(true);
    input.on?.("data", onData);
    input.resume?.();
  });
}
