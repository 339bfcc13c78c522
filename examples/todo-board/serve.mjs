// A tiny static file server for the demo's built site (dist/). No dependencies: it is run directly with node,
// and the start script and the end-to-end tests import startStaticServer() from it.
import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const CONTENT_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * Serves the files under `root` over HTTP (GET and HEAD only). `/` and any folder path serve its index.html.
 * A path that could leave `root` (`..` in any encoding, backslashes, NUL bytes, symlinks pointing outside)
 * is refused.
 *
 * @param {{ root: string, host?: string, port?: number }} options
 * @returns {Promise<{ url: string, port: number, close(): Promise<void> }>}
 */
export async function startStaticServer({ root, host = "127.0.0.1", port = 0 }) {
  if (typeof root !== "string" || root.length === 0) throw new TypeError("startStaticServer needs a root folder");
  const realRoot = await realpath(path.resolve(root));
  const server = createServer((request, response) => {
    handleRequest(realRoot, request, response).catch(() => {
      if (!response.headersSent) sendText(response, 500, "Internal Server Error", request.method === "HEAD");
      else response.destroy();
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(undefined);
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("The server has no TCP address");
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}/`,
    port: address.port,
    close() {
      return new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve(undefined)));
        // Keep-alive connections would otherwise hold close() open.
        server.closeAllConnections();
      });
    },
  };
}

/** @param {string} root @param {import("node:http").IncomingMessage} request @param {import("node:http").ServerResponse} response */
async function handleRequest(root, request, response) {
  const headOnly = request.method === "HEAD";
  if (request.method !== "GET" && !headOnly) {
    response.setHeader("Allow", "GET, HEAD");
    sendText(response, 405, "Method Not Allowed", false);
    return;
  }
  const segments = parseRequestPath(request.url ?? "");
  if (segments === undefined) {
    sendText(response, 400, "Bad Request", headOnly);
    return;
  }
  const filePath = await resolveFile(root, segments);
  if (filePath === undefined) {
    sendText(response, 404, "Not Found", headOnly);
    return;
  }
  const fileStat = await stat(filePath);
  response.writeHead(200, {
    "Content-Type": CONTENT_TYPES[path.extname(filePath).toLowerCase()] ?? "application/octet-stream",
    "Content-Length": fileStat.size,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
  if (headOnly) {
    response.end();
    return;
  }
  const stream = createReadStream(filePath);
  stream.on("error", () => response.destroy());
  stream.pipe(response);
}

/**
 * Splits a request target into decoded path segments, or undefined when it must be refused. The check runs
 * on the raw target, not through `new URL()`, because URL parsing quietly resolves `..` and `%2e%2e` and
 * would hide an attempt that should be refused.
 *
 * @param {string} target
 * @returns {string[] | undefined}
 */
function parseRequestPath(target) {
  // Only origin-form targets ("/path?query"); absolute-form ("http://…") and "*" are refused.
  if (!target.startsWith("/")) return undefined;
  const pathPart = target.split(/[?#]/, 1)[0] ?? "";
  const segments = [];
  for (const rawSegment of pathPart.split("/")) {
    let segment;
    try {
      segment = decodeURIComponent(rawSegment);
    } catch {
      return undefined;
    }
    if (segment === "..") return undefined;
    if (segment.includes("/") || segment.includes("\\") || segment.includes("\0") || segment.includes(":")) {
      return undefined;
    }
    if (segment === "" || segment === ".") continue;
    segments.push(segment);
  }
  if (pathPart.endsWith("/") || segments.length === 0) segments.push("index.html");
  return segments;
}

/**
 * The real path of the requested regular file when it lies inside root, else undefined.
 *
 * @param {string} root @param {string[]} segments
 * @returns {Promise<string | undefined>}
 */
async function resolveFile(root, segments) {
  const candidate = path.resolve(root, ...segments);
  if (!isInside(root, candidate)) return undefined;
  let real;
  try {
    real = await realpath(candidate);
    const candidateStat = await stat(real);
    if (candidateStat.isDirectory()) {
      real = await realpath(path.join(real, "index.html"));
      if (!(await stat(real)).isFile()) return undefined;
    } else if (!candidateStat.isFile()) {
      return undefined;
    }
  } catch {
    return undefined;
  }
  // A symlink inside root may point anywhere; only what really lies inside root is served.
  return isInside(root, real) ? real : undefined;
}

/** @param {string} root @param {string} candidate */
function isInside(root, candidate) {
  const relative = path.relative(root, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** @param {import("node:http").ServerResponse} response @param {number} status @param {string} text @param {boolean} headOnly */
function sendText(response, status, text, headOnly) {
  const body = `${text}\n`;
  response.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    "X-Content-Type-Options": "nosniff",
  });
  response.end(headOnly ? undefined : body);
}

/** @param {string[]} argv @returns {number} */
function readPortArgument(argv) {
  const index = argv.indexOf("--port");
  if (index === -1) return 0;
  const value = argv[index + 1];
  const port = Number(value);
  if (value === undefined || !Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`--port needs a number from 0 to 65535, got ${value === undefined ? "nothing" : JSON.stringify(value)}`);
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

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(await realpath(invokedPath).catch(() => invokedPath)).href) {
  await main();
}
