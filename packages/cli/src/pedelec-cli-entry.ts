import { runAgentCli } from "./agent-cli-command.js";

process.exitCode = await runAgentCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
});
