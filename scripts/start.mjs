// `npm start`: after the build, registers the native host, starts Core, serves the demo and says what to open.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { startStaticServer } from "../examples/todo-board/serve.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const pedelec = (...args) => execFileSync(process.execPath, [join(root, "packages/cli/bin/pedelec.js"), ...args], { stdio: "inherit" });
const requestedPort = Number.parseInt(process.env.PORT ?? "5173", 10);

for (const browser of ["chromium", "chrome"]) pedelec("install", "--browser", browser);
pedelec("start", "--detach");

let server;
try {
  server = await startStaticServer({ root: join(root, "examples/todo-board/dist"), host: "127.0.0.1", port: requestedPort });
} catch {
  server = await startStaticServer({ root: join(root, "examples/todo-board/dist"), host: "127.0.0.1", port: 0 });
}
// The React example beside it, on any free port.
const notesEditor = await startStaticServer({ root: join(root, "examples/notes-editor/dist"), host: "127.0.0.1", port: 0 });

console.log(`
Pedelec is running.

1. Load the extension once: open chrome://extensions, switch on "Developer mode", click "Load unpacked"
   and choose ${join(root, "packages/extension/dist")}
2. Open the demo: ${server.url}
   Click Connect, approve the origin in the Pedelec popup, and ask the agent to work on the board.
3. Or the React example, a notes editor whose every agent edit waits for your Accept: ${notesEditor.url}

Pick a provider in the demo: it shows which agent CLIs Pedelec found and why the others are unavailable
(\`npx pedelec providers\` says the same here).
Press Ctrl+C to stop the demo server and Core.`);

const shutdown = async () => {
  await server.close();
  await notesEditor.close();
  pedelec("stop");
  process.exit(0);
};
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
