import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStaticServer, type StaticServer } from "../serve.mjs";

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends the path exactly as given: fetch() would normalise "..", which is the very thing under test. */
function rawRequest(server: StaticServer, rawPath: string, method = "GET"): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: "127.0.0.1", port: server.port, path: rawPath, method, timeout: 5_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
      response.on("error", reject);
    });
    outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer for ${rawPath}`)));
    outgoing.on("error", reject);
    outgoing.end();
  });
}

const SECRET = "top secret outside the root";
let workFolder: string;
let server: StaticServer;

beforeAll(async () => {
  workFolder = await mkdtemp(path.join(tmpdir(), "todo-board-serve-"));
  const root = path.join(workFolder, "site");
  await mkdir(path.join(root, "sub"), { recursive: true });
  await writeFile(path.join(workFolder, "secret.txt"), SECRET);
  await writeFile(path.join(root, "index.html"), "<!doctype html><title>home</title>");
  await writeFile(path.join(root, "app.js"), "console.log('app');");
  await writeFile(path.join(root, "style.css"), "body { margin: 0 }");
  await writeFile(path.join(root, "data.json"), '{"ok":true}');
  await writeFile(path.join(root, "icon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>");
  await writeFile(path.join(root, "pixel.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  await writeFile(path.join(root, "sub", "index.html"), "sub page");
  await symlink(path.join(workFolder, "secret.txt"), path.join(root, "link-out.txt"));
  server = await startStaticServer({ root });
});

afterAll(async () => {
  await server?.close();
  if (workFolder !== undefined) await rm(workFolder, { recursive: true, force: true });
});

describe("startStaticServer", () => {
  it("listens on 127.0.0.1 at a free port and reports its URL", () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`);
  });

  it.each([
    ["/", "text/html; charset=utf-8", "<title>home</title>"],
    ["/index.html", "text/html; charset=utf-8", "<title>home</title>"],
    ["/app.js", "text/javascript; charset=utf-8", "console.log"],
    ["/style.css", "text/css; charset=utf-8", "margin"],
    ["/data.json", "application/json; charset=utf-8", '{"ok":true}'],
    ["/icon.svg", "image/svg+xml", "<svg"],
    ["/pixel.png", "image/png", "PNG"],
    ["/sub/", "text/html; charset=utf-8", "sub page"],
    ["/sub", "text/html; charset=utf-8", "sub page"],
    ["/app.js?v=2#top", "text/javascript; charset=utf-8", "console.log"],
  ])("serves %s as %s", async (rawPath, contentType, content) => {
    const response = await rawRequest(server, rawPath);
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe(contentType);
    expect(response.body).toContain(content);
  });

  it("answers HEAD with the headers only", async () => {
    const response = await rawRequest(server, "/app.js", "HEAD");
    expect(response.status).toBe(200);
    expect(response.headers["content-length"]).toBe(String("console.log('app');".length));
    expect(response.body).toBe("");
  });

  it.each(["POST", "PUT", "DELETE"])("refuses %s with 405", async (method) => {
    const response = await rawRequest(server, "/index.html", method);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe("GET, HEAD");
  });

  it.each(["/missing.html", "/sub/missing.js", "/%252e%252e/secret.txt", "//secret.txt"])("answers 404 for %s", async (rawPath) => {
    expect((await rawRequest(server, rawPath)).status).toBe(404);
  });

  it.each([
    "/../secret.txt",
    "/sub/../../secret.txt",
    "/%2e%2e/secret.txt",
    "/%2E%2E/secret.txt",
    "/.%2e/secret.txt",
    "/%2e%2e%2fsecret.txt",
    "/..%2fsecret.txt",
    "/sub/..%2f..%2fsecret.txt",
    "/..%5csecret.txt",
    "/..\\secret.txt",
    "/sub/%2e%2e%5c%2e%2e%5csecret.txt",
    "<absolute path of the secret, encoded>",
    "/C:%5cWindows%5cwin.ini",
    "/index.html%00.png",
    "/%00",
    "/%E0%A4%A",
    "http://127.0.0.1/../secret.txt",
  ])("refuses %s with 400", async (rawPath) => {
    const target = rawPath.startsWith("<") ? `/${encodeURIComponent(path.join(workFolder, "secret.txt"))}` : rawPath;
    const response = await rawRequest(server, target);
    expect(response.status).toBe(400);
    expect(response.body).not.toContain(SECRET);
  });

  it("does not follow a symlink that points outside the root", async () => {
    const response = await rawRequest(server, "/link-out.txt");
    expect(response.status).toBe(404);
    expect(response.body).not.toContain(SECRET);
  });

  it("keeps serving after refusing bad requests, and close() stops it", async () => {
    const other = await startStaticServer({ root: path.join(workFolder, "site") });
    expect((await rawRequest(other, "/%2e%2e/secret.txt")).status).toBe(400);
    expect((await rawRequest(other, "/")).status).toBe(200);
    await other.close();
    await expect(rawRequest(other, "/")).rejects.toThrow();
  });

  it("rejects a missing root folder at start", async () => {
    await expect(startStaticServer({ root: path.join(workFolder, "nowhere") })).rejects.toThrow();
  });
});

describe("serve.mjs as a script", () => {
  it("exits with a message for a bad --port", async () => {
    const script = fileURLToPath(new URL("../serve.mjs", import.meta.url));
    const child = spawn(process.execPath, [script, "--port", "nope"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const exitCode = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(exitCode).toBe(1);
    expect(stderr).toMatch(/--port needs a number from 0 to 65535, got "nope"/);
  });
});
