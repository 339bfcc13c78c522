// Bundles the agent-facing commands into one file each. Agents run them for every tool call and script, and Node
// loading a few hundred separate modules costs more than the work itself; one minified file loads in a fraction.
import { rm } from "node:fs/promises";
import { build } from "esbuild";
import { agentCommandBuilds } from "./agent-command-bundles.mjs";

await rm(new URL("../dist/agent-commands", import.meta.url), { recursive: true, force: true });
for (const options of agentCommandBuilds()) {
  const result = await build({ ...options, metafile: true });
  for (const [path, output] of Object.entries(result.metafile.outputs)) console.log(`${path}: ${(output.bytes / 1024).toFixed(1)} KiB`);
}
