// Attacks on the sandbox, each with its exact outcome: a refusal before the run, the script's exit code with the
// error it met, or what it printed. Real Deno, real bubblewrap, real files outside the workspace.
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { link, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ScriptRunResult } from "@pedelec/protocol/script-run";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateDeno } from "./deno-binary.js";
import { detectSandboxWall } from "./sandbox-wall.js";
import { ScriptRunner, type ScriptRunRequest } from "./script-runner.js";

const SECRET = `TOP-SECRET-${process.pid}-${Date.now()}`;

interface Context {
  ws: string;
  outside: string;
  secretTxt: string;
  secretTs: string;
  secretJson: string;
  serverUrl: string;
}

type Expectation =
  | { refused: "DENO_ENTRY_INVALID" | "DENO_IMPORT_MAP_INVALID" | "WORKSPACE_PATH_INVALID"; message?: RegExp }
  /** An uncaught error of this name ends the script with exit code 1. */
  | { error: string; stderr?: RegExp }
  | { exitCode: number; stdout?: string | RegExp; stderr?: RegExp };

interface Case {
  name: string;
  /** Files (workspace-relative → content) and other preparation inside the workspace. */
  files?: Record<string, string> | ((context: Context) => Record<string, string>);
  setup?: (context: Context) => Promise<void>;
  /** The script, as source text (the default) or a workspace entry. */
  source?: (context: Context) => string;
  entry?: string | ((context: Context) => string);
  importMap?: string;
  args?: string[];
  expect: Expectation;
  after?: (context: Context, result: ScriptRunResult | undefined) => void | Promise<void>;
}

let root: string;
let outside: string;
let runner: ScriptRunner;
let server: Server;
let serverUrl: string;
let serverHits = 0;
let runCounter = 0;

/**
 * A script that runs each statement and prints what stopped it: the error's name, or its OS error number (30 EROFS, 18
 * EXDEV, 16 EBUSY, 21 EISDIR) for errors Deno gives no name; "ran" when nothing did.
 */
const tryEach = (statements: string[]) =>
  statements
    .map(
      (statement) =>
        `try { ${statement}; console.log("ran"); } catch (error) { console.log(/\\(os error (\\d+)\\)/.exec(error.message)?.[0] ?? error.name); }`,
    )
    .join("\n");

/** Pedelec's folders are still real folders after the run. */
const runtimeIntact = (context: Context) => {
  for (const name of ["", "assets", "logs", "skills", "tmp"]) expect(lstatSync(join(context.ws, ".pedelec-runtime", name)).isDirectory()).toBe(true);
};

const secretUnchanged = (context: Context) => {
  expect(readFileSync(context.secretTxt, "utf8")).toBe(SECRET);
};

const cases: Case[] = [
  // — Module graph: outside files are refused before anything runs.
  {
    name: "static import of an outside module by absolute path",
    source: (c) => `import { s } from ${JSON.stringify(c.secretTs)}; console.log(s);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /is outside the workspace/ },
  },
  {
    name: "static import of an outside module through ..",
    source: () => `import { s } from "../outside/secret.ts"; console.log(s);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /is outside the workspace/ },
  },
  {
    name: "static import of an outside module by file:// URL",
    source: (c) => `import { s } from ${JSON.stringify(pathToFileURL(c.secretTs).href)}; console.log(s);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /is outside the workspace/ },
  },
  {
    name: "dynamic import with a literal outside path",
    source: (c) => `const m = await import(${JSON.stringify(c.secretTs)}); console.log(m.s);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /is outside the workspace/ },
  },
  {
    name: "JSON import of an outside file",
    source: (c) => `import data from ${JSON.stringify(c.secretJson)} with { type: "json" }; console.log(data);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /secret\.json is outside the workspace/ },
  },
  {
    name: "text import of an outside file",
    source: (c) => `import text from ${JSON.stringify(c.secretTxt)} with { type: "text" }; console.log(text);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /secret\.txt is outside the workspace/ },
  },
  {
    name: "text import of /etc/passwd",
    source: () => `import text from "/etc/passwd" with { type: "text" }; console.log(text);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /file:\/\/\/etc\/passwd is outside the workspace/ },
  },
  {
    name: "dynamic literal text import of /etc/passwd",
    source: () => `const m = await import("/etc/passwd", { with: { type: "text" } }); console.log(m.default);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /etc\/passwd is outside the workspace/ },
  },
  {
    name: "bytes import of an outside file",
    source: (c) => `import bytes from ${JSON.stringify(c.secretTxt)} with { type: "bytes" }; console.log(bytes);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /outside the workspace/ },
  },
  {
    name: "import through a workspace symlink to an outside module",
    setup: async (c) => symlink(c.secretTs, join(c.ws, "link.ts")),
    source: () => `import { s } from "./link.ts"; console.log(s);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /link\.ts resolves outside the workspace through a symlink/ },
  },
  {
    name: "import through a workspace symlink to an outside folder",
    setup: async (c) => symlink(c.outside, join(c.ws, "linked-folder")),
    source: () => `import { s } from "./linked-folder/secret.ts"; console.log(s);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /resolves outside the workspace through a symlink/ },
  },
  {
    name: "import of a workspace module that imports an outside one",
    files: (c) => ({ "inner.ts": `export { s } from ${JSON.stringify(c.secretTs)};` }),
    source: () => `import { s } from "./inner.ts"; console.log(s);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /is outside the workspace/ },
  },
  {
    name: "data: module",
    source: () => `import value from "data:application/javascript,export default 7"; console.log(value);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /data:application\/javascript.* is not a workspace file/ },
  },
  {
    name: "data: module importing an outside file",
    source: (c) => `import "data:application/javascript,import ${encodeURIComponent(`'${pathToFileURL(c.secretTs).href}'`)}";`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /is not a workspace file/ },
  },
  {
    name: "remote https import",
    source: () => `import "https://deno.land/std/version.ts";`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /https:\/\/deno\.land\/std\/version\.ts is not a workspace file/ },
  },
  {
    name: "remote import of a local http server",
    source: (c) => `import ${JSON.stringify(`${c.serverUrl}/module.js`)};`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /is not a workspace file/ },
    after: () => expect(serverHits).toBe(0),
  },
  {
    name: "npm: import",
    source: () => `import leftPad from "npm:left-pad@1.3.0"; console.log(leftPad("x", 3));`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /npm:left-pad@1\.3\.0 is not a workspace file/ },
  },
  {
    name: "jsr: import",
    source: () => `import { assert } from "jsr:@std/assert@1"; assert(true);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /jsr:@std\/assert@1 is not a workspace file/ },
  },
  {
    name: "missing local module",
    source: () => `import "./does-not-exist.ts";`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /does-not-exist\.ts cannot be loaded: Module not found/ },
  },
  {
    name: "bare specifier from deno.json imports (config ignored)",
    files: (c) => ({ "deno.json": JSON.stringify({ imports: { secret: pathToFileURL(c.secretTs).href }, tasks: { start: "deno run -A main.ts" } }) }),
    source: () => `import { s } from "secret"; console.log(s);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /"secret" in .* cannot be resolved/ },
  },
  {
    name: "bare specifier from package.json (config ignored)",
    files: (c) => ({
      "package.json": JSON.stringify({
        name: "x",
        imports: { "#secret": c.secretTs },
        dependencies: { secret: `file:${c.outside}` },
        scripts: { start: "cat /etc/passwd" },
      }),
    }),
    source: () => `import { s } from "#secret"; console.log(s);`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /cannot be resolved/ },
  },
  {
    name: "deno.json with permissions and unstable flags grants nothing",
    files: { "deno.json": JSON.stringify({ permissions: { default: { read: true, env: true } }, unstable: ["raw-imports"], compilerOptions: {} }) },
    source: (c) => `console.log(await Deno.readTextFile(${JSON.stringify(c.secretTxt)}));`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
  },
  {
    name: "node:fs built-in is allowed, reading outside is not",
    source: (c) => `import { readFileSync } from "node:fs"; console.log(readFileSync(${JSON.stringify(c.secretTxt)}, "utf8"));`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
  },

  // — Computed imports and workers: Deno's read permission, then the wall.
  {
    name: "computed dynamic import of an outside module",
    source: (c) => `const path = [${JSON.stringify(c.outside)}, "secret.ts"].join("/"); const m = await import(path); console.log(m.s);`,
    expect: { error: "TypeError", stderr: /Requires read access to ".*outside\/secret\.ts"/ },
  },
  {
    name: "computed dynamic text import of /etc/passwd",
    source: () => `const path = ["", "etc", "passwd"].join("/"); const m = await import(path, { with: { type: "text" } }); console.log(m.default);`,
    expect: { error: "TypeError", stderr: /Requires read access to "\/etc\/passwd"/ },
  },
  {
    name: "computed dynamic remote import",
    source: () => `const url = ["https:", "", "deno.land", "std", "version.ts"].join("/"); await import(url);`,
    expect: { error: "TypeError", stderr: /Requires import access|--no-remote|not a local file/ },
  },
  {
    name: "Worker loading an outside module",
    source: (c) =>
      `const worker = new Worker(${JSON.stringify(pathToFileURL(c.secretTs).href)}, { type: "module" }); worker.onmessage = (event) => console.log(event.data); await new Promise((resolve) => setTimeout(resolve, 2000));`,
    expect: { exitCode: 1, stderr: /Uncaught \(in worker ""\) Requires read access to ".*outside\/secret\.ts"/ },
  },
  {
    name: "Worker loading a data: module that reads outside",
    source: (c) =>
      `const code = ${JSON.stringify(`postMessage(Deno.readTextFileSync(${JSON.stringify(c.secretTxt)}))`)}; const worker = new Worker("data:application/javascript," + encodeURIComponent(code), { type: "module" }); worker.onmessage = (event) => console.log(event.data); await new Promise((resolve) => setTimeout(resolve, 2000));`,
    expect: { exitCode: 1, stderr: /NotCapable|Requires (read|import) access/ },
  },

  // — File system through Deno's APIs.
  {
    name: "read an outside file by absolute path",
    source: (c) => `console.log(await Deno.readTextFile(${JSON.stringify(c.secretTxt)}));`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
  },
  {
    name: "read an outside file through ..",
    source: () => `console.log(await Deno.readTextFile("../outside/secret.txt"));`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
  },
  {
    name: "read /etc/passwd",
    source: () => `console.log(Deno.readTextFileSync("/etc/passwd"));`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
  },
  {
    name: "read /proc/1/environ",
    source: () => `console.log(await Deno.readTextFile("/proc/1/environ"));`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
  },
  {
    name: "read /proc/self/environ",
    source: () => `console.log(await Deno.readTextFile("/proc/self/environ"));`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
  },
  {
    name: "list /",
    source: () => `for await (const entry of Deno.readDir("/")) console.log(entry.name);`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
  },
  {
    name: "write outside through ..",
    source: () => `await Deno.writeTextFile("../outside/planted.txt", "x");`,
    expect: { error: "NotCapable", stderr: /Requires write access/ },
    after: (c) => expect(existsSync(join(c.outside, "planted.txt"))).toBe(false),
  },
  {
    name: "write outside by absolute path",
    source: (c) => `Deno.writeTextFileSync(${JSON.stringify(join(c.outside, "planted.txt"))}, "x");`,
    expect: { error: "NotCapable", stderr: /Requires write access/ },
    after: (c) => expect(existsSync(join(c.outside, "planted.txt"))).toBe(false),
  },
  {
    name: "rename a workspace file to outside",
    files: { "movable.txt": "m" },
    source: (c) => `Deno.renameSync("movable.txt", ${JSON.stringify(join(c.outside, "moved.txt"))});`,
    expect: { error: "NotCapable", stderr: /Requires (read|write) access/ },
    after: (c) => expect(existsSync(join(c.outside, "moved.txt"))).toBe(false),
  },
  {
    name: "chmod an outside file",
    source: (c) => `Deno.chmodSync(${JSON.stringify(c.secretTxt)}, 0o777);`,
    expect: { error: "NotCapable", stderr: /Requires write access/ },
  },
  {
    name: "remove an outside file",
    source: (c) => `Deno.removeSync(${JSON.stringify(c.secretTxt)});`,
    expect: { error: "NotCapable", stderr: /Requires write access/ },
    after: secretUnchanged,
  },
  {
    name: "read through a workspace symlink to an outside file",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () => `console.log(await Deno.readTextFile("link.txt"));`,
    expect: { error: "NotFound" },
  },
  {
    name: "write through a workspace symlink to an outside file",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () => `await Deno.writeTextFile("link.txt", "overwritten");`,
    expect: { error: "NotFound" },
    after: secretUnchanged,
  },
  {
    name: "append through a workspace symlink",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () => `await Deno.writeTextFile("link.txt", "more", { append: true });`,
    expect: { error: "NotFound" },
    after: secretUnchanged,
  },
  {
    name: "truncate through a workspace symlink",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () => `await Deno.truncate("link.txt", 0);`,
    expect: { error: "FilesystemLoop" },
    after: secretUnchanged,
  },
  {
    name: "open for writing through a workspace symlink",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () => `const file = await Deno.open("link.txt", { write: true, truncate: true }); await file.write(new TextEncoder().encode("x"));`,
    expect: { error: "NotFound" },
    after: secretUnchanged,
  },
  {
    name: "remove through a workspace symlink removes only the link",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () => `await Deno.remove("link.txt"); console.log("removed");`,
    expect: { exitCode: 0, stdout: "removed\n" },
    after: (c) => {
      secretUnchanged(c);
      expect(existsSync(join(c.ws, "link.txt"))).toBe(false);
    },
  },
  {
    name: "remove a file inside a symlinked outside folder",
    setup: async (c) => symlink(c.outside, join(c.ws, "linked-folder")),
    source: () => `await Deno.remove("linked-folder/secret.txt");`,
    expect: { error: "NotFound" },
    after: secretUnchanged,
  },
  {
    name: "recursive remove of a symlinked outside folder removes only the link",
    setup: async (c) => symlink(c.outside, join(c.ws, "linked-folder")),
    source: () => `await Deno.remove("linked-folder", { recursive: true }); console.log("removed");`,
    expect: { exitCode: 0, stdout: "removed\n" },
    after: secretUnchanged,
  },
  {
    name: "readDir through a symlinked outside folder",
    setup: async (c) => symlink(c.outside, join(c.ws, "linked-folder")),
    source: () => `for await (const entry of Deno.readDir("linked-folder")) console.log(entry.name);`,
    expect: { error: "NotFound" },
  },
  {
    name: "copyFile out of a workspace symlink",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () => `await Deno.copyFile("link.txt", "copy.txt");`,
    expect: { error: "NotFound" },
    after: (c) => expect(existsSync(join(c.ws, "copy.txt"))).toBe(false),
  },
  {
    name: "copyFile into a symlinked outside folder",
    files: { "plant.txt": "planted" },
    setup: async (c) => symlink(c.outside, join(c.ws, "linked-folder")),
    source: () => `await Deno.copyFile("plant.txt", "linked-folder/planted.txt");`,
    expect: { error: "NotFound" },
    after: (c) => expect(existsSync(join(c.outside, "planted.txt"))).toBe(false),
  },
  {
    name: "makeTempFile into a symlinked outside folder",
    setup: async (c) => symlink(c.outside, join(c.ws, "linked-folder")),
    source: () => `console.log(await Deno.makeTempFile({ dir: "linked-folder" }));`,
    expect: { error: "NotFound" },
    after: (c) => expect(readdirSync(c.outside).sort()).toEqual(["secret.json", "secret.ts", "secret.txt", "shared.txt"]),
  },
  {
    name: "stat through a workspace symlink",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () => `console.log(JSON.stringify(await Deno.stat("link.txt")));`,
    expect: { error: "NotFound" },
  },
  {
    name: "realPath of a workspace symlink to outside",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () => `console.log(await Deno.realPath("link.txt"));`,
    expect: { error: "NotFound" },
  },
  {
    name: "readLink shows a symlink's text but not the file",
    setup: async (c) => symlink(c.secretTxt, join(c.ws, "link.txt")),
    source: () =>
      `console.log(Deno.readLinkSync("link.txt") === ${"Deno.cwd()"} ? "same" : "target-path-visible"); console.log(Deno.lstatSync("link.txt").isSymlink);`,
    expect: { exitCode: 0, stdout: "target-path-visible\ntrue\n" },
  },
  {
    name: "a hard link already in the workspace is workspace content",
    setup: async (c) => link(join(c.outside, "shared.txt"), join(c.ws, "hard.txt")),
    source: () => `console.log(await Deno.readTextFile("hard.txt"));`,
    expect: { exitCode: 0, stdout: "HARD-LINKED\n" },
  },
  {
    name: "Deno.linkSync from an outside file",
    source: (c) => `Deno.linkSync(${JSON.stringify(c.secretTxt)}, "stolen.txt");`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
    after: (c) => expect(existsSync(join(c.ws, "stolen.txt"))).toBe(false),
  },
  {
    name: "Deno.symlinkSync to an outside file",
    source: (c) => `Deno.symlinkSync(${JSON.stringify(c.secretTxt)}, "made-link.txt");`,
    expect: { error: "NotCapable", stderr: /requires unscoped --allow-read and --allow-write/ },
    after: (c) => expect(existsSync(join(c.ws, "made-link.txt"))).toBe(false),
  },
  {
    name: "Deno.symlinkSync to a workspace file",
    files: { "target.txt": "t" },
    source: () => `Deno.symlinkSync("target.txt", "made-link.txt");`,
    expect: { error: "NotCapable" },
  },

  // — Permissions other than files.
  {
    name: "fetch to a local http server",
    source: (c) => `const response = await fetch(${JSON.stringify(c.serverUrl)}); console.log(await response.text());`,
    expect: { error: "NotCapable", stderr: /Requires net access/ },
    after: () => expect(serverHits).toBe(0),
  },
  {
    name: "Deno.connect to a local server",
    source: (c) => `const url = new URL(${JSON.stringify(c.serverUrl)}); await Deno.connect({ hostname: url.hostname, port: Number(url.port) });`,
    expect: { error: "NotCapable", stderr: /Requires net access/ },
  },
  { name: "Deno.listen", source: () => `Deno.listen({ port: 0 });`, expect: { error: "NotCapable", stderr: /Requires net access/ } },
  {
    name: "read an environment variable",
    source: () => `console.log(Deno.env.get("HOME"));`,
    expect: { error: "NotCapable", stderr: /Requires env access/ },
  },
  {
    name: "read the whole environment",
    source: () => `console.log(JSON.stringify(Deno.env.toObject()));`,
    expect: { error: "NotCapable", stderr: /Requires env access/ },
  },
  {
    name: "spawn a subprocess with Deno.Command",
    source: () =>
      `const output = await new Deno.Command("/bin/sh", { args: ["-c", "cat /etc/passwd"] }).output(); console.log(new TextDecoder().decode(output.stdout));`,
    expect: { error: "NotCapable", stderr: /Requires run access/ },
  },
  {
    name: "spawn Deno itself",
    source: () => `await new Deno.Command(Deno.execPath(), { args: ["eval", "console.log(1)"] }).output();`,
    expect: { error: "NotCapable", stderr: /Requires run access/ },
  },
  {
    name: "fork-like spawning through node:child_process",
    source: () =>
      `import { spawnSync } from "node:child_process"; const out = spawnSync("/bin/sh", ["-c", "echo escaped"]); console.log(String(out.stdout), out.error?.name);`,
    expect: { exitCode: 1, stderr: /NotCapable|Requires run access/ },
  },
  {
    name: "FFI with Deno.dlopen",
    source: () => `Deno.dlopen("libc.so.6", { getpid: { parameters: [], result: "i32" } });`,
    expect: { error: "NotCapable", stderr: /Requires ffi access/ },
  },
  { name: "sys: Deno.hostname", source: () => `console.log(Deno.hostname());`, expect: { error: "NotCapable", stderr: /Requires sys access/ } },
  { name: "sys: Deno.osRelease", source: () => `console.log(Deno.osRelease());`, expect: { error: "NotCapable", stderr: /Requires sys access/ } },
  {
    name: "sys: Deno.networkInterfaces",
    source: () => `console.log(Deno.networkInterfaces());`,
    expect: { error: "NotCapable", stderr: /Requires sys access/ },
  },
  {
    name: "Deno.execPath names no host folder and cannot be read",
    source: () => `console.log(Deno.execPath()); await Deno.readFile(Deno.execPath());`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
    after: (_c, result) => expect(result?.stdout).toBe("/opt/pedelec-runtime/deno\n"),
  },

  // — Arguments never change permissions.
  {
    name: "--allow-net as an argument",
    args: ["--allow-net"],
    source: (c) => `console.log(JSON.stringify(Deno.args)); await fetch(${JSON.stringify(c.serverUrl)});`,
    expect: { error: "NotCapable", stderr: /Requires net access/ },
    after: (_c, result) => expect(result?.stdout).toBe('["--allow-net"]\n'),
  },
  {
    name: "-A as an argument",
    args: ["-A"],
    source: (c) => `console.log(JSON.stringify(Deno.args)); Deno.readTextFileSync(${JSON.stringify(c.secretTxt)});`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
    after: (_c, result) => expect(result?.stdout).toBe('["-A"]\n'),
  },
  {
    name: "--allow-read=/ as an argument",
    args: ["--allow-read=/", "--allow-all"],
    source: () => `console.log(JSON.stringify(Deno.args)); Deno.readTextFileSync("/etc/passwd");`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
    after: (_c, result) => expect(result?.stdout).toBe('["--allow-read=/","--allow-all"]\n'),
  },
  {
    name: "-- after -- reaches Deno.args only (first literal -- dropped)",
    args: ["--", "--", "-A", "x"],
    source: () => `console.log(JSON.stringify(Deno.args));`,
    expect: { exitCode: 0, stdout: '["--","-A","x"]\n' },
  },
  {
    name: "--v8-flags as an argument",
    args: ["--v8-flags=--max-old-space-size=1"],
    source: () => `console.log(JSON.stringify(Deno.args));`,
    expect: { exitCode: 0, stdout: '["--v8-flags=--max-old-space-size=1"]\n' },
  },

  // — Entries.
  { name: "entry ../x.ts", entry: "../x.ts", expect: { refused: "DENO_ENTRY_INVALID", message: /leaves the workspace/ } },
  { name: "entry a/../../x.ts", entry: "a/../../outside/secret.ts", expect: { refused: "DENO_ENTRY_INVALID", message: /leaves the workspace/ } },
  { name: "entry given as an absolute path", entry: (c) => c.secretTs, expect: { refused: "DENO_ENTRY_INVALID", message: /not absolute/ } },
  {
    name: "entry given as an absolute path inside the workspace",
    files: { "main.ts": "console.log(1)" },
    entry: (c) => join(c.ws, "main.ts"),
    expect: { refused: "DENO_ENTRY_INVALID", message: /not absolute/ },
  },
  {
    name: "entry given as a file:// URL",
    entry: (c) => pathToFileURL(c.secretTs).href,
    expect: { refused: "DENO_ENTRY_INVALID", message: /not a URL/ },
  },
  {
    name: "entry through a symlink to an outside module",
    setup: async (c) => symlink(c.secretTs, join(c.ws, "entry.ts")),
    entry: "entry.ts",
    expect: { refused: "DENO_ENTRY_INVALID", message: /resolves outside the workspace through a symlink/ },
  },
  {
    name: "entry that is a symlink to a workspace module",
    files: { "real.ts": "console.log(1)" },
    setup: async (c) => symlink(join(c.ws, "real.ts"), join(c.ws, "entry.ts")),
    entry: "entry.ts",
    expect: { refused: "DENO_ENTRY_INVALID", message: /goes through a symlink/ },
  },
  {
    name: "entry inside a symlinked outside folder",
    setup: async (c) => symlink(c.outside, join(c.ws, "linked-folder")),
    entry: "linked-folder/secret.ts",
    expect: { refused: "DENO_ENTRY_INVALID", message: /resolves outside the workspace through a symlink/ },
  },
  { name: "missing entry", entry: "nope.ts", expect: { refused: "DENO_ENTRY_INVALID", message: /does not exist/ } },
  {
    name: "entry that is a folder",
    setup: async (c) => mkdir(join(c.ws, "folder.ts")),
    entry: "folder.ts",
    expect: { refused: "DENO_ENTRY_INVALID", message: /not a regular file/ },
  },
  { name: "entry with a NUL character", entry: "main.ts\0.txt", expect: { refused: "DENO_ENTRY_INVALID", message: /NUL/ } },
  { name: "empty entry", entry: "", expect: { refused: "DENO_ENTRY_INVALID", message: /exactly one of entry and source|is empty/ } },

  // — Import maps.
  {
    name: "import map target outside the workspace",
    files: { "map.json": JSON.stringify({ imports: { secret: "../outside/secret.ts" } }) },
    importMap: "map.json",
    source: () => `import { s } from "secret"; console.log(s);`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /points outside the workspace/ },
  },
  {
    name: "import map prefix target outside the workspace",
    files: { "map.json": JSON.stringify({ imports: { "lib/": "../outside/" } }) },
    importMap: "map.json",
    source: () => `import { s } from "lib/secret.ts"; console.log(s);`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /points outside the workspace/ },
  },
  {
    name: "import map absolute target outside",
    files: (c) => ({ "map.json": JSON.stringify({ imports: { secret: c.secretTs } }) }),
    importMap: "map.json",
    source: () => `import { s } from "secret";`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /points outside the workspace/ },
  },
  {
    name: "import map scoped target outside",
    files: { "map.json": JSON.stringify({ scopes: { "./": { secret: "/etc/passwd" } } }) },
    importMap: "map.json",
    source: () => `import "secret";`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /points outside the workspace/ },
  },
  {
    name: "import map target through a workspace symlink to outside",
    files: { "map.json": JSON.stringify({ imports: { secret: "./link.ts" } }) },
    setup: async (c) => symlink(c.secretTs, join(c.ws, "link.ts")),
    importMap: "map.json",
    source: () => `import { s } from "secret";`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /through a symlink/ },
  },
  {
    name: "import map remote target",
    files: { "map.json": JSON.stringify({ imports: { lib: "https://deno.land/x/lib.ts" } }) },
    importMap: "map.json",
    source: () => `import "lib";`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /not a workspace file/ },
  },
  {
    name: "import map npm target",
    files: { "map.json": JSON.stringify({ imports: { pad: "npm:left-pad" } }) },
    importMap: "map.json",
    source: () => `import "pad";`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /not a workspace file/ },
  },
  {
    name: "import map data: target",
    files: { "map.json": JSON.stringify({ imports: { x: "data:application/javascript,export default 1" } }) },
    importMap: "map.json",
    source: () => `import "x";`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /not a workspace file/ },
  },
  {
    name: "import map node: target",
    files: { "map.json": JSON.stringify({ imports: { fs: "node:fs" } }) },
    importMap: "map.json",
    source: () => `import "fs";`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /not a workspace file/ },
  },
  {
    name: "import map with the reserved key pedelec:workspace",
    files: { "map.json": JSON.stringify({ imports: { "pedelec:workspace": "./fake.ts" } }) },
    importMap: "map.json",
    source: () => `import { workspaceRoot } from "pedelec:workspace"; console.log(workspaceRoot);`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /reserved/ },
  },
  {
    name: "import map with another pedelec: key",
    files: { "map.json": JSON.stringify({ scopes: { "./": { "PEDELEC:other": "./x.ts" } } }) },
    importMap: "map.json",
    source: () => `console.log(1);`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /reserved/ },
  },
  {
    name: "import map that is not JSON",
    files: { "map.json": "{ imports: " },
    importMap: "map.json",
    source: () => `console.log(1);`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /not valid JSON/ },
  },
  {
    name: "import map with an unknown top-level key",
    files: { "map.json": JSON.stringify({ imports: {}, integrity: {} }) },
    importMap: "map.json",
    source: () => `console.log(1);`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /unknown top-level key "integrity"/ },
  },
  {
    name: "import map with a non-string target",
    files: { "map.json": JSON.stringify({ imports: { x: 1 } }) },
    importMap: "map.json",
    source: () => `console.log(1);`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /must be a string/ },
  },
  {
    name: "import map file outside the workspace",
    importMap: "../outside/map.json",
    source: () => `console.log(1);`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /leaves the workspace/ },
  },
  {
    name: "import map given as a symlink to an outside file",
    setup: async (c) => {
      await writeFile(join(c.outside, "..", "outside-map.json"), "{}");
      await symlink(join(c.outside, "..", "outside-map.json"), join(c.ws, "map.json"));
    },
    importMap: "map.json",
    source: () => `console.log(1);`,
    expect: { refused: "DENO_IMPORT_MAP_INVALID", message: /through a symlink/ },
  },
  {
    name: "a valid workspace import map works",
    files: {
      "map.json": JSON.stringify({ imports: { lib: "./vendor/lib.ts", "util/": "./vendor/util/" } }),
      "vendor/lib.ts": `export const v = "lib";`,
      "vendor/util/u.ts": `export const u = "util";`,
    },
    importMap: "map.json",
    source: () => `import { v } from "lib"; import { u } from "util/u.ts"; console.log(v, u);`,
    expect: { exitCode: 0, stdout: "lib util\n" },
  },

  // — What a script is given.
  {
    name: "pedelec:workspace gives the workspace paths and thread",
    source: () => `import * as workspace from "pedelec:workspace"; console.log(JSON.stringify(workspace));`,
    expect: { exitCode: 0 },
    after: (c, result) =>
      expect(JSON.parse(result?.stdout ?? "")).toEqual({
        workspaceRoot: c.ws,
        assetsDir: join(c.ws, ".pedelec-runtime/assets"),
        tmpDir: join(c.ws, ".pedelec-runtime/tmp"),
        threadId: "thread-attack",
      }),
  },
  {
    name: "pedelec:workspace module file cannot be read",
    source: () => `import.meta.resolve; const url = import.meta.resolve("pedelec:workspace"); console.log(await Deno.readTextFile(new URL(url)));`,
    expect: { error: "NotCapable", stderr: /Requires read access/ },
  },
  {
    name: "temporary files land in the workspace tmp folder",
    source: () => `const path = await Deno.makeTempFile(); console.log(path.startsWith(Deno.cwd() + "/.pedelec-runtime/tmp/"));`,
    expect: { exitCode: 0, stdout: "true\n" },
  },
  {
    name: "writing inside the workspace works",
    source: () => `await Deno.writeTextFile("written.txt", "hello"); console.log(await Deno.readTextFile("written.txt"));`,
    expect: { exitCode: 0, stdout: "hello\n" },
    after: (c) => expect(readFileSync(join(c.ws, "written.txt"), "utf8")).toBe("hello"),
  },
  {
    name: "relative imports from stdin resolve from the workspace root",
    files: { "lib/value.ts": `export const value: number = 41 + 1;` },
    source: () => `import { value } from "./lib/value.ts"; console.log(value);`,
    expect: { exitCode: 0, stdout: "42\n" },
  },
  {
    name: "a type error still runs (no type check)",
    source: () => `const n: number = "text" as unknown as number; console.log(typeof n);`,
    expect: { exitCode: 0, stdout: "string\n" },
  },
  { name: "the script's own exit code passes through", source: () => `Deno.exit(7);`, expect: { exitCode: 7, stdout: "" } },
  {
    name: "syntax error in a workspace module is refused with Deno's message",
    files: { "broken.ts": "let x = ;" },
    source: () => `import "./broken.ts";`,
    expect: { refused: "DENO_ENTRY_INVALID", message: /broken\.ts cannot be loaded: SyntaxError/ },
  },
  {
    name: "a workspace .pedelec-runtime symlinked outside is refused",
    setup: async (c) => {
      await rm(join(c.ws, ".pedelec-runtime"), { recursive: true, force: true });
      await symlink(c.outside, join(c.ws, ".pedelec-runtime"));
    },
    source: () => `console.log(1);`,
    expect: { refused: "WORKSPACE_PATH_INVALID", message: /\.pedelec-runtime is a symlink/ },
    after: (c) => expect(readdirSync(c.outside).sort()).toEqual(["secret.json", "secret.ts", "secret.txt", "shared.txt"]),
  },
  // — Pedelec's .pedelec-runtime: read-only in the sandbox except assets/ and tmp/, and none of its mounted folders can be replaced.
  {
    name: "replacing .pedelec-runtime/assets with a file is refused",
    source: () =>
      tryEach([
        `Deno.removeSync(".pedelec-runtime/assets", { recursive: true })`,
        `Deno.renameSync(".pedelec-runtime/assets", "moved")`,
        `Deno.writeTextFileSync(".pedelec-runtime/assets", "x")`,
      ]),
    expect: { exitCode: 0, stdout: "(os error 30)\n(os error 18)\n(os error 21)\n" },
    after: (c) => runtimeIntact(c),
  },
  {
    name: "rewriting or adding a run log is refused",
    setup: async (c) => {
      await mkdir(join(c.ws, ".pedelec-runtime/logs"), { recursive: true });
      await writeFile(join(c.ws, ".pedelec-runtime/logs/run-old.json"), "{}");
    },
    source: () =>
      tryEach([
        `Deno.writeTextFileSync(".pedelec-runtime/logs/run-old.json", "forged")`,
        `Deno.writeTextFileSync(".pedelec-runtime/logs/run-new.json", "forged")`,
        `Deno.removeSync(".pedelec-runtime/logs/run-old.json")`,
        `Deno.removeSync(".pedelec-runtime/logs", { recursive: true })`,
      ]),
    expect: { exitCode: 0, stdout: "(os error 30)\n(os error 30)\n(os error 30)\n(os error 30)\n" },
    after: (c) => {
      expect(readFileSync(join(c.ws, ".pedelec-runtime/logs/run-old.json"), "utf8")).toBe("{}");
      runtimeIntact(c);
    },
  },
  {
    name: "replacing .pedelec-runtime itself or its tmp folder is refused",
    source: () =>
      tryEach([
        `Deno.removeSync(".pedelec-runtime", { recursive: true })`,
        `Deno.renameSync(".pedelec-runtime", "moved")`,
        `Deno.renameSync(".pedelec-runtime/tmp", "moved")`,
        `Deno.mkdirSync(".pedelec-runtime/extra")`,
      ]),
    expect: { exitCode: 0, stdout: "(os error 30)\n(os error 16)\n(os error 18)\n(os error 30)\n" },
    after: (c) => runtimeIntact(c),
  },
  {
    name: "assets and tmp stay writable",
    source: () =>
      `Deno.writeTextFileSync(".pedelec-runtime/assets/out.txt", "made"); Deno.mkdirSync(".pedelec-runtime/tmp/work"); console.log("ok");`,
    expect: { exitCode: 0, stdout: "ok\n" },
    after: (c) => expect(readFileSync(join(c.ws, ".pedelec-runtime/assets/out.txt"), "utf8")).toBe("made"),
  },
];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "pedelec-attacks-"));
  outside = join(root, "outside");
  await mkdir(outside);
  await writeFile(join(outside, "secret.txt"), SECRET);
  await writeFile(join(outside, "secret.ts"), `export const s = ${JSON.stringify(SECRET)};\nconsole.log(s);\n`);
  await writeFile(join(outside, "secret.json"), JSON.stringify({ s: SECRET }));
  await writeFile(join(outside, "shared.txt"), "HARD-LINKED");
  server = createServer((_request, response) => {
    serverHits += 1;
    response.end(SECRET);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A caller environment that would change Deno's behaviour if any of it reached a sandboxed run.
  const hostEnv = {
    ...process.env,
    DENO_V8_FLAGS: "--max-heap-size=1",
    DENO_DIR: join(outside, "deno-dir"),
    HTTP_PROXY: serverUrl,
    HTTPS_PROXY: serverUrl,
    DENO_CERT: join(outside, "cert.pem"),
    DENO_AUTO_SERVE: "1",
  };
  runner = new ScriptRunner({
    denoPath: await locateDeno(),
    wall: await detectSandboxWall(),
    privateDir: join(root, "private"),
    hostEnv,
    limits: { pollMs: 50 },
  });
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(root, { recursive: true, force: true });
});

async function runCase(testCase: Case): Promise<{ result?: ScriptRunResult; refusal?: { code: string; message: string }; context: Context }> {
  runCounter += 1;
  const ws = await mkdtemp(join(root, "ws-"));
  const context: Context = {
    ws,
    outside,
    secretTxt: join(outside, "secret.txt"),
    secretTs: join(outside, "secret.ts"),
    secretJson: join(outside, "secret.json"),
    serverUrl,
  };
  const files = typeof testCase.files === "function" ? testCase.files(context) : (testCase.files ?? {});
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(ws, name, ".."), { recursive: true });
    await writeFile(join(ws, name), content);
  }
  await testCase.setup?.(context);
  const request: ScriptRunRequest = {
    runId: `attack-${runCounter}`,
    threadId: "thread-attack",
    workspaceRoot: ws,
    access: "sandbox",
    timeoutMs: 15_000,
  };
  if (testCase.entry !== undefined) request.entry = typeof testCase.entry === "function" ? testCase.entry(context) : testCase.entry;
  else request.source = testCase.source?.(context) ?? "";
  if (testCase.importMap !== undefined) request.importMap = testCase.importMap;
  if (testCase.args !== undefined) request.args = testCase.args;
  try {
    return { result: await runner.run(request), context };
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return { refusal: { code, message }, context };
  }
}

describe("sandbox attack battery", () => {
  it("has at least 60 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
  });

  it.each(cases.map((testCase) => [testCase.name, testCase] as const))("%s", async (_name, testCase) => {
    const { result, refusal, context } = await runCase(testCase);
    const expected = testCase.expect;
    if ("refused" in expected) {
      expect(result, `expected a refusal, the script ran: ${JSON.stringify(result)}`).toBeUndefined();
      expect(refusal?.code).toBe(expected.refused);
      if (expected.message !== undefined) expect(refusal?.message).toMatch(expected.message);
      expect(refusal?.message).not.toContain(SECRET);
    } else {
      expect(refusal, `expected the script to run: ${JSON.stringify(refusal)}`).toBeUndefined();
      const ran = result as ScriptRunResult;
      expect(ran.termination).toBe("exited");
      expect(ran.walls).toEqual(["deno-permissions", "bubblewrap"]);
      if ("error" in expected) {
        expect(ran.exitCode, ran.stderr).toBe(1);
        expect(ran.stderr).toMatch(new RegExp(`Uncaught (\\(in promise\\) )?(error: )?${expected.error}\\b`));
        if (expected.stderr !== undefined) expect(ran.stderr).toMatch(expected.stderr);
      } else {
        expect(ran.exitCode, ran.stderr).toBe(expected.exitCode);
        if (typeof expected.stdout === "string") expect(ran.stdout).toBe(expected.stdout);
        else if (expected.stdout !== undefined) expect(ran.stdout).toMatch(expected.stdout);
        if (expected.stderr !== undefined) expect(ran.stderr).toMatch(expected.stderr);
      }
      expect(ran.stdout).not.toContain(SECRET);
      expect(ran.stderr).not.toContain(SECRET);
    }
    await testCase.after?.(context, result);
    // No run leaves its private files or its stdin copy behind.
    expect((await readdir(context.ws)).filter((name) => name.startsWith(".pedelec-stdin-"))).toEqual([]);
  });
});

describe("sandbox limits and lifecycle", () => {
  let limited: ScriptRunner;
  const OUTPUT_CAP = 64 * 1024;

  beforeAll(async () => {
    limited = new ScriptRunner({
      denoPath: await locateDeno(),
      wall: await detectSandboxWall(),
      privateDir: join(root, "private-limited"),
      hostEnv: process.env,
      limits: { heapMiB: 64, rssMiB: 256, outputBytes: OUTPUT_CAP, pollMs: 50 },
    });
  });

  async function workspace(): Promise<string> {
    return mkdtemp(join(root, "limits-"));
  }

  it("kills an ArrayBuffer memory bomb through the RSS watchdog, quickly", async () => {
    const result = await limited.run({
      runId: "array-buffer-bomb",
      threadId: "thread-limits",
      workspaceRoot: await workspace(),
      access: "sandbox",
      source: "const keep = []; for (;;) keep.push(new Uint8Array(16 * 1024 * 1024).fill(1));",
      timeoutMs: 30_000,
    });
    expect(result.termination).toBe("memory-limit");
    expect(result.signal).toBe("SIGKILL");
    expect(result.exitCode).toBeNull();
    expect(result.timedOut).toBe(false);
    expect(result.durationMs).toBeLessThan(10_000);
  });

  it("reports a heap bomb that V8 ends at the heap limit as memory-limit", async () => {
    const result = await limited.run({
      runId: "heap-bomb",
      threadId: "thread-limits",
      workspaceRoot: await workspace(),
      access: "sandbox",
      source: `const keep = []; for (;;) keep.push({ value: Math.random(), text: "x" + Math.random() });`,
      timeoutMs: 30_000,
    });
    // Deno dies of SIGTRAP (5); bubblewrap reports it as 128 + 5, and V8 says why on stderr.
    expect(result.exitCode).toBe(133);
    expect(result.stderr).toMatch(/# Fatal JavaScript out of memory/);
    expect(result.termination).toBe("memory-limit");
    expect(result.timedOut).toBe(false);
  });

  it("keeps a plain exit 133 as the script's own, even with V8's words on stdout", async () => {
    const result = await limited.run({
      runId: "exit-133",
      threadId: "thread-limits",
      workspaceRoot: await workspace(),
      access: "sandbox",
      source: `console.log("# Fatal JavaScript out of memory: not really"); console.error("something else"); Deno.exit(133);`,
      timeoutMs: 30_000,
    });
    expect(result).toMatchObject({ termination: "exited", exitCode: 133, signal: null });
  });

  it("repairs .pedelec-runtime damaged from outside before the next run", async () => {
    const ws = await workspace();
    const run = (runId: string) =>
      limited.run({ runId, threadId: "thread-limits", workspaceRoot: ws, access: "sandbox", source: `console.log("ran");`, timeoutMs: 30_000 });
    expect((await run("before-damage")).stdout).toBe("ran\n");
    await rm(join(ws, ".pedelec-runtime/assets"), { recursive: true });
    await writeFile(join(ws, ".pedelec-runtime/assets"), "a file where the folder belongs");
    await rm(join(ws, ".pedelec-runtime/tmp"), { recursive: true });
    await symlink(outside, join(ws, ".pedelec-runtime/tmp"));
    expect(await run("after-damage")).toMatchObject({ termination: "exited", exitCode: 0, stdout: "ran\n" });
    for (const name of ["assets", "tmp"]) expect(lstatSync(join(ws, ".pedelec-runtime", name)).isDirectory()).toBe(true);
    expect(readdirSync(outside).sort()).toEqual(["secret.json", "secret.ts", "secret.txt", "shared.txt"]);
  });

  it("times out an infinite loop", async () => {
    const result = await limited.run({
      runId: "busy-loop",
      threadId: "thread-limits",
      workspaceRoot: await workspace(),
      access: "sandbox",
      source: "for (;;) {}",
      timeoutMs: 700,
    });
    expect(result.termination).toBe("timeout");
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe("SIGKILL");
    expect(result.durationMs).toBeGreaterThanOrEqual(690);
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it("truncates a stdout flood at the cap and still completes", async () => {
    const streamed: Buffer[] = [];
    const result = await limited.run({
      runId: "flood",
      threadId: "thread-limits",
      workspaceRoot: await workspace(),
      access: "sandbox",
      source: `const line = "y".repeat(1023); for (let index = 0; index < 1024; index += 1) console.log(line); console.error("done");`,
      onOutput: (stream, chunk) => {
        if (stream === "stdout") streamed.push(chunk);
      },
    });
    expect(result.termination).toBe("exited");
    expect(result.exitCode).toBe(0);
    expect(result.stdoutTruncated).toBe(true);
    expect(result.stderrTruncated).toBe(false);
    expect(Buffer.byteLength(result.stdout)).toBe(OUTPUT_CAP);
    expect(Buffer.concat(streamed).length).toBe(OUTPUT_CAP);
    expect(result.stderr).toBe("done\n");
  });

  it("truncates an endless flood and times it out", async () => {
    const result = await limited.run({
      runId: "endless-flood",
      threadId: "thread-limits",
      workspaceRoot: await workspace(),
      access: "sandbox",
      source: `const line = "z".repeat(4000); for (;;) console.log(line);`,
      timeoutMs: 1_000,
    });
    expect(result.termination).toBe("timeout");
    expect(result.stdoutTruncated).toBe(true);
    expect(Buffer.byteLength(result.stdout)).toBe(OUTPUT_CAP);
  });

  it("cancels a script that ignores SIGTERM through the AbortSignal, and logs the reason", async () => {
    const ws = await workspace();
    const controller = new AbortController();
    const result = await limited.run({
      runId: "stubborn",
      threadId: "thread-limits",
      workspaceRoot: ws,
      access: "sandbox",
      source: `Deno.addSignalListener("SIGTERM", () => console.log("ignored")); console.log("ready"); setInterval(() => {}, 1000);`,
      onOutput: (_stream, chunk) => {
        if (chunk.toString().includes("ready")) controller.abort("the user stopped the thread");
      },
      signal: controller.signal,
    });
    expect(result.termination).toBe("cancelled");
    expect(result.signal).toBe("SIGKILL");
    expect(result.stdout).toBe("ready\n");
    const logs = await readdir(join(ws, ".pedelec-runtime/logs"));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^run-\d{8}T\d{9}Z-stubborn\.json$/);
    const log = JSON.parse(readFileSync(join(ws, ".pedelec-runtime/logs", logs[0] as string), "utf8"));
    expect(log).toMatchObject({
      runId: "stubborn",
      threadId: "thread-limits",
      access: "sandbox",
      entry: "stdin",
      argsCount: 0,
      walls: ["deno-permissions", "bubblewrap"],
      termination: "cancelled",
      exitCode: null,
      signal: "SIGKILL",
      cancelReason: "the user stopped the thread",
      stdoutTruncated: false,
    });
    expect(JSON.stringify(log)).not.toContain("ready");
  });

  it("refuses a run whose signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    await expect(
      limited.run({
        runId: "pre-aborted",
        threadId: "t",
        workspaceRoot: await workspace(),
        access: "sandbox",
        source: "console.log(1)",
        signal: controller.signal,
      }),
    ).rejects.toMatchObject({ code: "DENO_CANCELLED" });
  });

  it("keeps the caller's environment away from the run and the pre-check", async () => {
    const names = ["DENO_V8_FLAGS", "DENO_DIR", "HTTP_PROXY", "HTTPS_PROXY", "DENO_AUTO_SERVE"] as const;
    const saved = names.map((name) => [name, process.env[name]] as const);
    const injectedDenoDir = join(outside, "injected-deno-dir");
    // --max-heap-size=1 makes any Deno that sees it abort at start.
    Object.assign(process.env, {
      DENO_V8_FLAGS: "--max-heap-size=1",
      DENO_DIR: injectedDenoDir,
      HTTP_PROXY: serverUrl,
      HTTPS_PROXY: serverUrl,
      DENO_AUTO_SERVE: "1",
    });
    try {
      const ws = await workspace();
      await writeFile(join(ws, "lib.ts"), `export const value = "ok";`);
      const hitsBefore = serverHits;
      const result = await limited.run({
        runId: "env-injection",
        threadId: "t",
        workspaceRoot: ws,
        access: "sandbox",
        source: `import { value } from "./lib.ts"; console.log(value);`,
      });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toBe("ok\n");
      expect(existsSync(injectedDenoDir)).toBe(false);
      expect(serverHits).toBe(hitsBefore);
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("refuses sandboxed runs when there is no OS wall", async () => {
    const unwalled = new ScriptRunner({
      denoPath: await locateDeno(),
      wall: { kind: "none", reason: "bubblewrap is not installed" },
      privateDir: join(root, "private-unwalled"),
      hostEnv: process.env,
    });
    await expect(
      unwalled.run({ runId: "no-wall", threadId: "t", workspaceRoot: await workspace(), access: "sandbox", source: "console.log(1)" }),
    ).rejects.toMatchObject({ code: "DENO_UNAVAILABLE", message: expect.stringContaining("bubblewrap is not installed") });
  });

  it("refuses a missing Deno binary", async () => {
    const missing = new ScriptRunner({
      denoPath: join(root, "no-deno"),
      wall: await detectSandboxWall(),
      privateDir: join(root, "private-missing"),
      hostEnv: process.env,
    });
    await expect(
      missing.run({ runId: "no-deno", threadId: "t", workspaceRoot: await workspace(), access: "sandbox", source: "console.log(1)" }),
    ).rejects.toMatchObject({ code: "DENO_UNAVAILABLE" });
  });

  it("counts active runs and removes the per-run private folder", async () => {
    const ws = await workspace();
    const controller = new AbortController();
    let sawActive = -1;
    const running = limited.run({
      runId: "counted",
      threadId: "t",
      workspaceRoot: ws,
      access: "sandbox",
      source: `console.log("started"); setInterval(() => {}, 1000);`,
      signal: controller.signal,
      onOutput: () => {
        sawActive = limited.activeRuns;
        expect(existsSync(join(root, "private-limited/runs/counted/import-map.json"))).toBe(true);
        controller.abort("done");
      },
    });
    const result = await running;
    expect(result.termination).toBe("cancelled");
    expect(sawActive).toBe(1);
    expect(limited.activeRuns).toBe(0);
    expect(existsSync(join(root, "private-limited/runs/counted"))).toBe(false);
  });
});
