import { MAX_TOOL_ARGS_JSON_LENGTH } from "@pedelec/protocol/json-limits";
import { runAgentCli } from "./agent-cli-command.js";
import { writeOutput } from "./fd-output.js";
import { readUtf8Stream } from "./read-utf8-stream.js";

// UTF-8 needs at most 4 bytes a character, so anything past this many bytes is over the limit whatever it holds.
const MAX_STDIN_BYTES = 4 * MAX_TOOL_ARGS_JSON_LENGTH;

// No top-level await: the command is bundled as CommonJS, which Node starts faster than an ES module.
void runAgentCli(process.argv.slice(2), {
  out: (text) => writeOutput(1, text),
  err: (text) => writeOutput(2, text),
  env: process.env,
  readStdin: () => readUtf8Stream(process.stdin, MAX_STDIN_BYTES),
  stdio: { input: process.stdin, output: process.stdout },
}).then((exitCode) => {
  process.exitCode = exitCode;
});
