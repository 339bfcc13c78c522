// bench/first-delta-latency.ts
import { spawn } from "node:child_process";
import { mkdtemp as mkdtemp2, rm as rm2 } from "node:fs/promises";
import { tmpdir as tmpdir2 } from "node:os";
import { join as join2 } from "node:path";

// test/e2e/harness.ts
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath as fileURLToPath2 } from "node:url";
import { promisify } from "node:util";
import { chromium } from "playwright-core";

// examples/todo-board/serve.mjs
import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
var CONTENT_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8"
};
async function startStaticServer({ root, host = "127.0.0.1", port = 0 }) {
  if (typeof root !== "string" || root.length === 0) throw new TypeError("startStaticServer needs a root folder");
  const realRoot = await realpath(path.resolve(root));
  const server = createServer((request, response) => {
    handleRequest(realRoot, request, response).catch(() => {
      if (!response.headersSent) sendText(response, 500, "Internal Server Error", request.method === "HEAD");
      else response.destroy();
    });
  });
  await new Promise((resolve2, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve2(void 0);
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("The server has no TCP address");
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}/`,
    port: address.port,
    close() {
      return new Promise((resolve2, reject) => {
        server.close((error) => error ? reject(error) : resolve2(void 0));
        server.closeAllConnections();
      });
    }
  };
}
async function handleRequest(root, request, response) {
  const headOnly = request.method === "HEAD";
  if (request.method !== "GET" && !headOnly) {
    response.setHeader("Allow", "GET, HEAD");
    sendText(response, 405, "Method Not Allowed", false);
    return;
  }
  const segments = parseRequestPath(request.url ?? "");
  if (segments === void 0) {
    sendText(response, 400, "Bad Request", headOnly);
    return;
  }
  const filePath = await resolveFile(root, segments);
  if (filePath === void 0) {
    sendText(response, 404, "Not Found", headOnly);
    return;
  }
  const fileStat = await stat(filePath);
  response.writeHead(200, {
    "Content-Type": CONTENT_TYPES[path.extname(filePath).toLowerCase()] ?? "application/octet-stream",
    "Content-Length": fileStat.size,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff"
  });
  if (headOnly) {
    response.end();
    return;
  }
  const stream = createReadStream(filePath);
  stream.on("error", () => response.destroy());
  stream.pipe(response);
}
function parseRequestPath(target) {
  if (!target.startsWith("/")) return void 0;
  const pathPart = target.split(/[?#]/, 1)[0] ?? "";
  const segments = [];
  for (const rawSegment of pathPart.split("/")) {
    let segment;
    try {
      segment = decodeURIComponent(rawSegment);
    } catch {
      return void 0;
    }
    if (segment === "..") return void 0;
    if (segment.includes("/") || segment.includes("\\") || segment.includes("\0") || segment.includes(":")) {
      return void 0;
    }
    if (segment === "" || segment === ".") continue;
    segments.push(segment);
  }
  if (pathPart.endsWith("/") || segments.length === 0) segments.push("index.html");
  return segments;
}
async function resolveFile(root, segments) {
  const candidate = path.resolve(root, ...segments);
  if (!isInside(root, candidate)) return void 0;
  let real;
  try {
    real = await realpath(candidate);
    const candidateStat = await stat(real);
    if (candidateStat.isDirectory()) {
      real = await realpath(path.join(real, "index.html"));
      if (!(await stat(real)).isFile()) return void 0;
    } else if (!candidateStat.isFile()) {
      return void 0;
    }
  } catch {
    return void 0;
  }
  return isInside(root, real) ? real : void 0;
}
function isInside(root, candidate) {
  const relative = path.relative(root, candidate);
  return relative === "" || !relative.startsWith("..") && !path.isAbsolute(relative);
}
function sendText(response, status, text, headOnly) {
  const body = `${text}
`;
  response.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    "X-Content-Type-Options": "nosniff"
  });
  response.end(headOnly ? void 0 : body);
}
function readPortArgument(argv) {
  const index = argv.indexOf("--port");
  if (index === -1) return 0;
  const value = argv[index + 1];
  const port = Number(value);
  if (value === void 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port needs a number from 0 to 65535, got ${value === void 0 ? "nothing" : JSON.stringify(value)}`);
  }
  return port;
}
async function main() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const root = path.join(here, "dist");
  let port;
  try {
    port = readPortArgument(process.argv.slice(2));
    await stat(path.join(root, "index.html"));
  } catch (error) {
    const message = error?.code === "ENOENT" ? `${root} has no index.html; run "npm run bundle -w @pedelec/example-todo-board" first` : error.message;
    console.error(message);
    process.exitCode = 1;
    return;
  }
  const server = await startStaticServer({ root, port });
  console.log(`todo-board is served at ${server.url}`);
  const stop = () => {
    server.close().finally(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
var invokedPath = process.argv[1];
if (invokedPath !== void 0 && import.meta.url === pathToFileURL(await realpath(invokedPath).catch(() => invokedPath)).href) {
  await main();
}

// test/e2e/harness.ts
var run = promisify(execFile);
var repoRoot = resolve(fileURLToPath2(new URL("../..", import.meta.url)));
var extensionDir = join(repoRoot, "packages/extension/dist");
var pedelecBin = join(repoRoot, "packages/cli/bin/pedelec.js");
var standInDir = join(repoRoot, "test/stand-ins/claude");
var sdkBundle = join(repoRoot, "packages/sdk/dist/pedelec.browser.js");
var SDK_TEST_PAGE = `<!doctype html>
<meta charset="utf-8">
<title>Pedelec SDK test page</title>
<script type="module">
  import * as sdk from "./pedelec.browser.js";
  window.sdk = sdk;
  window.sdkReady = true;
</script>`;
async function setUpE2e(options = {}) {
  const home = await mkdtemp(join(tmpdir(), "pedelec-e2e-home-"));
  const userDataDir = await mkdtemp(join(tmpdir(), "pedelec-e2e-profile-"));
  const env = {
    ...process.env,
    PEDELEC_HOME: home,
    PEDELEC_PROVIDER_PATH: standInDir,
    CLAUDE_CONFIG_DIR: join(home, "claude-state")
  };
  const pedelec = async (...args) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [pedelecBin, ...args], { env, cwd: repoRoot });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error;
      return { code: failed.code ?? 1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
    }
  };
  if (options.installHost !== false) {
    const installed = await pedelec("install", "--browser", "chromium", "--user-data-dir", userDataDir);
    if (installed.code !== 0) throw new Error(`pedelec install failed: ${installed.stderr}`);
  }
  if (options.startCore) {
    const started = await pedelec("start", "--detach");
    if (started.code !== 0) throw new Error(`pedelec start failed: ${started.stderr}`);
  }
  let siteDir = options.siteDir;
  let ownSite;
  if (!siteDir) {
    ownSite = await mkdtemp(join(tmpdir(), "pedelec-e2e-site-"));
    await writeFile(join(ownSite, "index.html"), SDK_TEST_PAGE);
    await copyFile(sdkBundle, join(ownSite, "pedelec.browser.js"));
    siteDir = ownSite;
  }
  const server = await startStaticServer({ root: siteDir, host: "127.0.0.1", port: 0 });
  const launchedAt = performance.now();
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      `--disable-extensions-except=${extensionDir}`,
      `--load-extension=${extensionDir}`,
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ],
    env
  });
  const launchMs = performance.now() - launchedAt;
  return {
    home,
    userDataDir,
    env,
    context,
    server,
    otherOriginUrl: server.url.replace("127.0.0.1", "localhost"),
    launchedAt,
    launchMs,
    pedelec,
    async close() {
      await context.close().catch(() => void 0);
      await server.close().catch(() => void 0);
      await pedelec("stop");
      await rm(home, { recursive: true, force: true });
      await rm(userDataDir, { recursive: true, force: true });
      if (ownSite) await rm(ownSite, { recursive: true, force: true });
    }
  };
}
async function openSdkPage(environment2, baseUrl = environment2.server.url) {
  const page = await environment2.context.newPage();
  await page.goto(baseUrl);
  await page.waitForFunction(() => window.sdkReady === true, void 0, { timeout: 1e4 });
  return page;
}

// bench/first-delta-latency.ts
var TURNS = Number.parseInt(process.env.BENCH_TURNS ?? "100", 10);
function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { median: at(0.5), p95: at(0.95) };
}
var ms = (value) => `${value.toFixed(1)} ms`;
async function standInFirstDelta() {
  const state = await mkdtemp2(join2(tmpdir2(), "pedelec-bench-claude-"));
  const started = performance.now();
  return new Promise((resolve2, reject) => {
    const child = spawn(join2(repoRoot, "test/stand-ins/claude/claude"), ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"], {
      cwd: state,
      env: { ...process.env, CLAUDE_CONFIG_DIR: state }
    });
    let seen = false;
    let buffer = "";
    child.stdout.on("data", (chunk) => {
      buffer += chunk.toString();
      if (!seen && buffer.includes('"text_delta"')) {
        seen = true;
        resolve2(performance.now() - started);
      }
    });
    child.on("error", reject);
    child.on("close", () => {
      void rm2(state, { recursive: true, force: true });
      if (!seen) reject(new Error("the stand-in printed no delta"));
    });
    child.stdin.end("reply: benchmark");
  });
}
var environment = await setUpE2e();
try {
  const worker = environment.context.serviceWorkers()[0] ?? await environment.context.waitForEvent("serviceworker");
  const origin = new URL(environment.server.url).origin;
  await worker.evaluate((approved) => chrome.storage.local.set({ approvedOrigins: [approved] }), origin);
  const page = await openSdkPage(environment);
  const created = await page.evaluate(async () => {
    const w = window;
    w.pedelec = new w.sdk.Pedelec();
    w.session = await w.pedelec.createSession({ provider: "claude" });
    return performance.timeOrigin + performance.now();
  });
  const launchToSession = created - (performance.timeOrigin + environment.launchedAt);
  const roundTrips = await page.evaluate(async (count) => {
    const w = window;
    const samples = [];
    for (let index = 0; index < count; index += 1) {
      const started = performance.now();
      await w.pedelec.getApprovalStatus();
      samples.push(performance.now() - started);
    }
    return samples;
  }, TURNS);
  const firstDeltas = await page.evaluate(async (count) => {
    const w = window;
    const samples = [];
    let started = 0;
    let pending;
    w.session.onChatDelta(() => {
      if (pending) {
        pending(performance.now() - started);
        pending = void 0;
      }
    });
    for (let index = 0; index < count; index += 1) {
      const first = new Promise((resolve2) => pending = resolve2);
      started = performance.now();
      const turn = w.session.sendText(`reply: turn ${index}`);
      samples.push(await first);
      await turn;
    }
    return samples;
  }, TURNS);
  const standIn = [];
  for (let index = 0; index < Math.min(TURNS, 30); index += 1) standIn.push(await standInFirstDelta());
  const delta = summary(firstDeltas);
  const baseline = summary(standIn);
  const bridge = summary(roundTrips);
  console.log(`Chromium launch \u2192 first session created (Core started by the native host): ${ms(launchToSession)}`);
  console.log(`  of which Chromium launch: ${ms(environment.launchMs)}`);
  console.log(`sendText \u2192 first delta over ${firstDeltas.length} turns: median ${ms(delta.median)}, p95 ${ms(delta.p95)}`);
  console.log(`baseline, stand-in agent alone (spawn \u2192 first delta line), ${standIn.length} runs: median ${ms(baseline.median)}, p95 ${ms(baseline.p95)}`);
  console.log(`ratio Pedelec / stand-in alone: median ${(delta.median / baseline.median).toFixed(2)}x, p95 ${(delta.p95 / baseline.p95).toFixed(2)}x`);
  console.log(`page \u2194 extension round trip (getApprovalStatus), ${roundTrips.length} runs: median ${ms(bridge.median)}, p95 ${ms(bridge.p95)}`);
} finally {
  await environment.close();
}
