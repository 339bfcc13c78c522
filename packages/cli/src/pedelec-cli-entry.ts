import { MAX_TOOL_ARGS_JSON_LENGTH } from "@pedelec/protocol/requests";
import { runAgentCli } from "./agent-cli-command.js";
import { readUtf8Stream } from "./read-utf8-stream.js";

// UTF-8 needs at most 4 bytes a character, so anything past this many bytes is over the limit whatever it holds.
const MAX_STDIN_BYTES = 4 * MAX_TOOL_ARGS_JSON_LENGTH;

process.exitCode = await runAgentCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  readStdin: () => readUtf8Stream(process.stdin, MAX_STDIN_BYTES),
});
