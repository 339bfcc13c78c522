import { MAX_SCRIPT_SOURCE_LENGTH } from "@pedelec/protocol/script-run";
import { readUtf8Stream } from "./read-utf8-stream.js";
import { runTsRuntime } from "./ts-runtime-command.js";

// UTF-8 needs at most 4 bytes a character, so anything past this many bytes is over the limit whatever it holds.
const MAX_STDIN_BYTES = 4 * MAX_SCRIPT_SOURCE_LENGTH;

process.exitCode = await runTsRuntime(process.argv.slice(2), {
  stdout: (chunk) => process.stdout.write(chunk),
  stderr: (chunk) => process.stderr.write(chunk),
  env: process.env,
  readStdin: () => readUtf8Stream(process.stdin, MAX_STDIN_BYTES),
});
