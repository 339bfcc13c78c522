// `npm start`: builds once (quietly, unless the build fails), registers the native host with the browsers found,
// starts Core, checks what the demo needs (browser, host registration, an agent), serves the two demos on fixed ports
// and says what to open. `--skip-build` uses the build already there.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const pedelecBin = join(root, "packages/cli/bin/pedelec.js");
const say = (line = "") => process.stdout.write(`${line}\n`);
const complain = (line) => process.stderr.write(`${line}\n`);

/** The demos' ports: fixed so the origin the user approves stays the same; an explicit 0 takes any free port. */
const demos = [
  { name: "the to-do board demo", variable: "PORT", fallback: 5173, folder: "examples/todo-board/dist" },
  { name: "the React notes editor", variable: "NOTES_PORT", fallback: 5174, folder: "examples/notes-editor/dist" },
];

/** Runs a command with its output kept; resolves its exit code, its stdout, and everything it printed in order. */
function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    const output = [];
    const stdout = [];
    child.stdout.on("data", (chunk) => {
      stdout.push(chunk);
      output.push(chunk);
    });
    child.stderr.on("data", (chunk) => output.push(chunk));
    child.on("error", (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on("close", (code) => {
      resolve({ code: code ?? 1, stdout: Buffer.concat(stdout).toString("utf8"), output: Buffer.concat(output).toString("utf8") });
    });
  });
}
const pedelec = (...args) => run(process.execPath, [pedelecBin, ...args]);

function portFrom(demo) {
  const raw = process.env[demo.variable];
  if (raw === undefined || raw === "") return demo.fallback;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    complain(`${demo.variable}=${raw} is not a port number (0 to 65535).`);
    process.exit(2);
  }
  return Number(raw);
}

/** Whether the port can be listened on now: tried for real, then let go. */
function portProblem(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (error) => resolve(error.code === "EADDRINUSE" ? "in use" : error.message));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(null)));
  });
}

function busyPortMessage(demo, port) {
  return (
    `Port ${port} on 127.0.0.1, where ${demo.name} is served, is in use (another program, or an \`npm start\` already running).\n` +
    `Stop that program, or choose another port: ${demo.variable}=<port> npm start. The port is never changed silently, ` +
    "because the extension's approval belongs to the exact origin."
  );
}

const skipBuild = process.argv.includes("--skip-build");
const ports = demos.map(portFrom);
if (ports[0] !== 0 && ports[0] === ports[1]) {
  complain(`PORT and NOTES_PORT are both ${ports[0]}; the two demos need a port each.`);
  process.exit(2);
}
// Checked before the build, so a busy port is known at once rather than after a minute of building.
for (const [index, demo] of demos.entries()) {
  if (ports[index] === 0) continue;
  const problem = await portProblem(ports[index]);
  if (problem !== null) {
    complain(problem === "in use" ? busyPortMessage(demo, ports[index]) : `Cannot listen on 127.0.0.1:${ports[index]} for ${demo.name}: ${problem}`);
    process.exit(1);
  }
}

if (!skipBuild) {
  say("Building Pedelec (TypeScript, then the bundles)…");
  const started = performance.now();
  const ticker = setInterval(() => say(`  still building… ${Math.round((performance.now() - started) / 1000)} s`), 15_000);
  const build = await run(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "build"]);
  clearInterval(ticker);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (build.code !== 0) {
    complain(build.output.trimEnd());
    complain(`\nThe build failed after ${seconds} s (its output is above).`);
    process.exit(1);
  }
  say(`Built in ${seconds} s.`);
}

say("Registering the native host with the browsers found…");
const installed = await pedelec("install");
if (installed.code === 2 || (installed.code !== 0 && installed.code !== 1)) {
  complain(installed.output.trimEnd());
  process.exit(1);
}
for (const line of installed.output.split("\n")) if (line.startsWith("Registered ") || line.startsWith("Could not ")) say(`  ${line}`);

say("Starting Core…");
const started = await pedelec("start", "--detach");
if (started.code !== 0) {
  complain(started.output.trimEnd());
  process.exit(1);
}
const stopCore = () => pedelec("stop");

say("Checking the browser, the host registration and the agents (`pedelec doctor`)…");
const doctor = await pedelec("doctor", "--json");
let problems = [];
try {
  problems = JSON.parse(doctor.stdout).checks.filter((check) => !check.ok);
} catch {
  problems = [{ name: "pedelec doctor", detail: "did not answer as expected", fix: `run \`npx pedelec doctor\` to see why:\n${doctor.output}` }];
}

const servers = [];
const shutdown = async (exitCode) => {
  for (const server of servers) await server.close().catch(() => undefined);
  await stopCore();
  process.exit(exitCode);
};
const { startStaticServer } = await import("../examples/todo-board/serve.mjs");
for (const [index, demo] of demos.entries()) {
  try {
    servers.push(await startStaticServer({ root: join(root, demo.folder), host: "127.0.0.1", port: ports[index] }));
  } catch (error) {
    // Taken between the check above and now.
    complain(error.code === "EADDRINUSE" ? busyPortMessage(demo, ports[index]) : `Cannot serve ${demo.name}: ${error.message}`);
    await shutdown(1);
  }
}
process.once("SIGINT", () => void shutdown(0));
process.once("SIGTERM", () => void shutdown(0));

const [board, notes] = servers;
if (problems.length > 0) {
  say(`\n${problems.length === 1 ? "One thing needs" : `${problems.length} things need`} your attention before the demo can work:`);
  for (const problem of problems) {
    say(`  ✗ ${problem.name}: ${problem.detail}`);
    say(`    fix: ${String(problem.fix).replaceAll("\n", "\n         ")}`);
  }
}
say(`
${problems.length === 0 ? "Pedelec is ready." : "Pedelec is running (see above for what is missing)."}

  1. Load the extension once: chrome://extensions → Developer mode → Load unpacked → ${join(root, "packages/extension/dist")}
  2. Open the demo: ${board.url}  (Connect, approve the origin in the Pedelec popup, ask the agent to work on the board)
     or the React notes editor: ${notes.url}
  Ctrl+C stops the demos and Core.`);
