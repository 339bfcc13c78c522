// Serves the built site (dist/): `npm run serve -w @pedelec/example-notes-editor [-- --port 5174]`. The static
// server itself is the to-do board's, which has no dependencies.
import { stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { startStaticServer } from "../todo-board/serve.mjs";

const root = fileURLToPath(new URL("dist/", import.meta.url));
const portIndex = process.argv.indexOf("--port");
const port = portIndex === -1 ? 0 : Number(process.argv[portIndex + 1]);

if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port needs a number from 0 to 65535, got ${JSON.stringify(process.argv[portIndex + 1] ?? null)}`);
  process.exit(1);
}
try {
  await stat(fileURLToPath(new URL("dist/index.html", import.meta.url)));
} catch {
  console.error(`${root} has no index.html; run "npm run bundle -w @pedelec/example-notes-editor" first`);
  process.exit(1);
}
const server = await startStaticServer({ root, port });
console.log(`notes-editor is served at ${server.url}`);
const stop = () => void server.close().finally(() => process.exit(0));
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
