import { runPedelecCommand } from "./pedelec-command.js";

process.exitCode = await runPedelecCommand(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
});
