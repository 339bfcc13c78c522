import { MAX_TOOL_ARGS_JSON_LENGTH } from "@pedelec/protocol/requests";
import { runAgentCli } from "./agent-cli-command.js";

// UTF-8 needs at most 4 bytes a character, so anything past this many bytes is over the limit whatever it holds.
const MAX_STDIN_BYTES = 4 * MAX_TOOL_ARGS_JSON_LENGTH;

process.exitCode = await runAgentCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  readStdin: async () => {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of process.stdin) {
      total += (chunk as Buffer).length;
      if (total > MAX_STDIN_BYTES) throw new Error(`more than ${MAX_STDIN_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
    // Invalid UTF-8 is refused, not silently replaced.
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  },
});
