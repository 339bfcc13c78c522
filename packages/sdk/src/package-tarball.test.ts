// What npm would publish: the package is built, packed with `npm pack`, and the tarball installed into a fresh project
// outside the repository, where an application using all four entries type-checks (moduleResolution bundler and
// node16, with declaration emit), bundles for the browser, and runs a tool round trip on the installed files.
//
// The tarball installs with `--offline`: it has no runtime dependency, so npm needs no registry (the test holds that
// too), and a CI machine's network cannot make it flaky. React and its types are linked in from this repository's
// install, and its TypeScript and esbuild do the checking, all at the versions its lockfile pins.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, transform } from "esbuild";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPackage, type PackageBuildSummary } from "../scripts/build-package.mjs";
import { browserBundleFile, bundleDirectory, packageEntries, packageName } from "../scripts/package-layout.mjs";

const packageRoot = fileURLToPath(new URL("..", import.meta.url));
const repoRoot = resolve(packageRoot, "../..");
const typescriptCompiler = join(repoRoot, "node_modules/typescript/bin/tsc");
// Without skipLibCheck, tsc reads all of React's declarations and ours: seconds alone, far longer on a busy machine.
const compileTimeoutMs = 180_000;
// What an application brings itself: React for the react entry, zod for a schema-typed tool.
const linkedPackages = ["react", "react-dom", "@types/react", "@types/react-dom", "zod"];

interface PackedFile {
  path: string;
  size: number;
}

interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  files: PackedFile[];
}

interface Manifest {
  name: string;
  type?: string;
  sideEffects?: boolean;
  exports: Record<string, string | { types: string | string[]; default: string }>;
  files: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  engines?: Record<string, string>;
}

let work: string;
let appDirectory: string;
let installed: string;
let packed: PackResult;
let summary: PackageBuildSummary;
let bundlerCheck: Promise<() => string>;
let node16Check: Promise<() => string>;

/** Holds a promise's outcome for a later test to read, without an unhandled rejection in between. */
function settled(promise: Promise<string>): Promise<() => string> {
  return promise.then(
    (value) => () => value,
    (error: unknown) => () => {
      throw error;
    },
  );
}

/** Runs a command to its end; rejects with its output when it fails. */
function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(command, args, { cwd, env: cleanEnvironment(), maxBuffer: 64 * 1024 * 1024, timeout: 240_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout}\n${stderr}`));
      else resolvePromise(stdout);
    });
  });
}

/** npm started by `npm test` passes its settings down (workspace, prefix…); the fresh project must not inherit them. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  const keep = new Set(["npm_config_cache", "npm_config_userconfig", "npm_config_registry"]);
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith("npm_") || keep.has(key.toLowerCase())));
}

const application = `import { Pedelec, PedelecError, defineTool, type PedelecSession, type ProviderCode } from "@kaoruisaac/pedelec";
import * as browser from "@kaoruisaac/pedelec/browser";
import { PedelecProvider, usePedelec, usePedelecSession, useTool } from "@kaoruisaac/pedelec/react";
import { createPedelecTestKit, type PedelecTestKit } from "@kaoruisaac/pedelec/testing";
import { z } from "zod";

// A tool typed from a zod schema: its handler's args are { title: string; pinned?: boolean | undefined }.
export const pinNote = defineTool({
  name: "pin_note",
  description: "Pin a note.",
  args: z.object({ title: z.string().min(1), pinned: z.boolean().optional() }),
  handler: (args) => ({ pinned: args.title.toUpperCase(), flag: args.pinned ?? false }),
});

export async function startPinned(client: Pedelec): Promise<void> {
  const session = await client.createSession({ provider: "claude", skills: { guidance: "", tools: [pinNote] } });
  session.onTool("pin_note", (args) => {
    const title: string = args.title;
    // @ts-expect-error: the schema has no such field
    void args.missing;
    return { title };
  });
}

export const addNote = defineTool({
  name: "add_note",
  description: "Add a note.",
  argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
});

export const provider: ProviderCode = "claude";

export async function start(client: Pedelec): Promise<PedelecSession<"add_note">> {
  const session = await client.createSession({ provider, skills: { guidance: "Keep notes.", tools: [addNote] } });
  session.onTool("add_note", (args) => ({ saved: args }));
  return session;
}

export function Notes() {
  const client = usePedelec();
  const { session, status, messages, error, send } = usePedelecSession({ provider, skills: { guidance: "", tools: [addNote] } });
  useTool(session, "add_note", (args) => ({ saved: args }));
  return (
    <section data-client={client === null ? "server" : "browser"}>
      {messages.map((message) => <p key={message.id}>{message.text}</p>)}
      {error instanceof PedelecError && <p role="alert">{error.code}</p>}
      <button disabled={status !== "idle"} onClick={() => void send("Add a note.")}>Send</button>
    </section>
  );
}

export function App({ client }: { client?: Pedelec }) {
  return <PedelecProvider client={client}><Notes /></PedelecProvider>;
}

export const pageWithoutBundler = (): Pedelec => new browser.Pedelec();
export const testKit = (): PedelecTestKit => createPedelecTestKit({ origin: "https://app.test" });
`;

// Plain JavaScript on purpose: it runs as Node runs an installed package, with no TypeScript in between.
const roundTrip = `import { defineTool, PedelecError } from "@kaoruisaac/pedelec";
import * as browser from "@kaoruisaac/pedelec/browser";
import * as react from "@kaoruisaac/pedelec/react";
import { createPedelecTestKit } from "@kaoruisaac/pedelec/testing";

const addNote = defineTool({
  name: "add_note",
  description: "Add a note.",
  argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
});
const kit = createPedelecTestKit();
kit.agent.onTurn(async (turn) => {
  const saved = await turn.callTool("add_note", { title: turn.text });
  turn.complete("Saved " + JSON.stringify(saved));
});
const session = await kit.pedelec.createSession({ provider: "claude", skills: { guidance: "Keep notes.", tools: [addNote] } });
session.onTool("add_note", (args) => ({ id: 1, title: args.title }));
const replies = [];
session.onChat((message) => replies.push(message.text));
await session.sendText("Milk");
const refused = await kit.pedelec.resumeSession("").catch((error) => error);
await kit.dispose();
console.log(JSON.stringify({
  replies,
  refusedIsPedelecError: refused instanceof PedelecError,
  refusedCode: refused.code,
  reactExports: Object.keys(react).sort(),
  browserHasPedelec: typeof browser.Pedelec === "function",
}));
`;

/** The first TypeScript code block under a README heading. */
function readmeBlock(readme: string, heading: string): string {
  const section = readme.slice(readme.indexOf(`\n${heading}\n`));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!section.startsWith(`\n${heading}`) || block === null) throw new Error(`README.md has no ts block under "${heading}"`);
  return block[1]!;
}

function compilerOptions(overrides: Record<string, unknown>): string {
  return JSON.stringify(
    {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        jsx: "react-jsx",
        lib: ["ES2022", "DOM", "DOM.Iterable"],
        types: [],
        skipLibCheck: false,
        ...overrides,
      },
      include: ["src"],
    },
    null,
    2,
  );
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "pedelec-package-"));
  summary = await buildPackage();
  packed = (JSON.parse(await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], packageRoot)) as PackResult[])[0]!;
  const tarball = join(work, packed.filename);

  appDirectory = join(work, "app");
  await mkdir(join(appDirectory, "src"), { recursive: true });
  await writeFile(join(appDirectory, "package.json"), JSON.stringify({ name: "pedelec-package-check", private: true, type: "module" }));
  await run("npm", ["install", tarball, "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], appDirectory);
  installed = join(appDirectory, "node_modules", packageName);
  for (const name of linkedPackages) {
    await mkdir(dirname(join(appDirectory, "node_modules", name)), { recursive: true });
    await symlink(join(repoRoot, "node_modules", name), join(appDirectory, "node_modules", name), "dir");
  }
  await writeFile(join(appDirectory, "src/app.tsx"), application);
  // The README's round trip is type-checked with the application and run as it stands.
  const readmeRoundTrip = readmeBlock(await readFile(join(packageRoot, "README.md"), "utf8"), "## A tool round trip");
  await writeFile(join(appDirectory, "src/readme-round-trip.ts"), readmeRoundTrip);
  await writeFile(join(appDirectory, "readme-round-trip.mjs"), (await transform(readmeRoundTrip, { loader: "ts", format: "esm" })).code);
  await writeFile(join(appDirectory, "round-trip.mjs"), roundTrip);
  await writeFile(join(appDirectory, "tsconfig.bundler.json"), compilerOptions({ module: "ESNext", moduleResolution: "Bundler" }));
  await writeFile(
    join(appDirectory, "tsconfig.node16.json"),
    compilerOptions({ module: "Node16", moduleResolution: "Node16", noEmit: false, declaration: true, emitDeclarationOnly: true, outDir: "types" }),
  );

  // Both compilers start now and run side by side; their tests wait for them.
  bundlerCheck = settled(run(process.execPath, [typescriptCompiler, "-p", "tsconfig.bundler.json"], appDirectory));
  node16Check = settled(run(process.execPath, [typescriptCompiler, "-p", "tsconfig.node16.json"], appDirectory));

  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  console.log(
    [
      `${packed.filename}: ${kib(packed.size)} packed, ${kib(packed.unpackedSize)} unpacked, ${packed.files.length} files`,
      ...packed.files.map((file) => `  ${file.path} (${kib(file.size)})`),
      ...summary.sizes.entries.map((entry) => `${entry.subpath}: ${kib(entry.minifiedBytes)} minified, ${kib(entry.gzipBytes)} gzip`),
      `bundled in (minified): ${summary.sizes.packages.map((item) => `${item.name} ${kib(item.minifiedBytes)}`).join(", ")}`,
      ...summary.declarationWarnings.map((warning) => `declarations: ${warning}`),
    ].join("\n"),
  );
}, 600_000);

afterAll(async () => {
  // The compilers read the project: let them finish before it goes.
  await Promise.all([bundlerCheck, node16Check]);
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("the npm package", () => {
  it("holds the manifest, the README, the built modules and declarations, and nothing else", () => {
    const paths = packed.files.map((file) => file.path).sort();
    const unexpected = paths.filter(
      (path) =>
        path !== "package.json" &&
        path !== "README.md" &&
        path !== browserBundleFile &&
        !(path.startsWith(`${bundleDirectory}/`) && /\.(js|d\.ts|txt)$/.test(path)),
    );
    expect(unexpected).toEqual([]);
    expect(paths.filter((path) => /(^|\/)(src|test|testing)\/|\.test\.|\.map$|tsbuildinfo/.test(path))).toEqual([]);
    for (const entry of packageEntries) {
      expect(paths).toContain(`${bundleDirectory}/${entry.name}.js`);
      expect(paths).toContain(`${bundleDirectory}/${entry.name}.d.ts`);
    }
    expect(paths).toContain(`${bundleDirectory}/THIRD-PARTY-NOTICES.txt`);
  });

  it("has a manifest whose exports all resolve inside the tarball, React as an optional peer and no dependency", async () => {
    const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8")) as Manifest;
    const paths = new Set(packed.files.map((file) => file.path));
    expect(manifest.name).toBe(packageName);
    expect(manifest.type).toBe("module");
    expect(manifest.sideEffects).toBe(false);
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies).toEqual({ react: ">=18" });
    expect(manifest.peerDependenciesMeta?.react?.optional).toBe(true);
    expect(manifest.engines?.node).toBeDefined();
    expect(manifest.scripts?.prepack).toBe("node scripts/bundle.mjs");
    expect(Object.keys(manifest.exports).sort()).toEqual([...packageEntries.map((entry) => entry.subpath), "./browser", "./package.json"].sort());
    for (const entry of packageEntries) {
      expect(manifest.exports[entry.subpath]).toMatchObject({ default: `./${bundleDirectory}/${entry.name}.js` });
    }
    expect(manifest.exports["./browser"]).toMatchObject({ default: `./${browserBundleFile}` });
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      if (typeof target === "string") {
        expect(paths, subpath).toContain(target.slice(2));
        continue;
      }
      expect(paths, subpath).toContain(target.default.slice(2));
      // In the repository the first candidate is tsc's output; the tarball has only the last, the bundled one.
      const candidates = Array.isArray(target.types) ? target.types : [target.types];
      expect(
        candidates.filter((candidate) => paths.has(candidate.slice(2))),
        subpath,
      ).toEqual([candidates.at(-1)]);
      expect(candidates.at(-1), subpath).toMatch(new RegExp(`^\\./${bundleDirectory}/[a-z]+\\.d\\.ts$`));
    }
  });

  it("leaves no workspace import and no path of this machine in its files", async () => {
    for (const file of packed.files) {
      const text = await readFile(join(installed, file.path), "utf8");
      expect(text.includes(repoRoot), `${file.path} names ${repoRoot}`).toBe(false);
      if (!file.path.endsWith(".d.ts")) continue;
      const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((imported) => imported.fileName);
      expect(
        specifiers.filter((specifier) => !specifier.startsWith("./") && !specifier.startsWith("../") && specifier !== "react"),
        file.path,
      ).toEqual([]);
    }
  });

  it("type-checks an application importing every entry, with moduleResolution bundler", { timeout: compileTimeoutMs }, async () => {
    (await bundlerCheck)();
  });

  it("type-checks it with moduleResolution node16 and emits its declarations", { timeout: compileTimeoutMs }, async () => {
    (await node16Check)();
    const declarations = await readFile(join(appDirectory, "types/app.d.ts"), "utf8");
    expect(declarations).toContain('from "@kaoruisaac/pedelec"');
    expect(declarations).not.toMatch(/dist\/bundle|chunks\//);
  });

  it("bundles the application for the browser, with React from the application and nothing else left to import", async () => {
    const result = await build({
      absWorkingDir: appDirectory,
      entryPoints: ["src/app.tsx"],
      outfile: "out/app.js",
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      jsx: "automatic",
      minify: true,
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.entries(result.metafile.inputs);
    const packageInputs = inputs.filter(([path]) => path.includes(`node_modules/${packageName}/`));
    expect(packageInputs.map(([path]) => path.slice(path.indexOf(packageName) + packageName.length + 1)).sort()).toEqual(
      expect.arrayContaining([...packageEntries.map((entry) => `${bundleDirectory}/${entry.name}.js`), browserBundleFile]),
    );
    const packageImports = packageInputs.flatMap(([, input]) => input.imports.map((entry) => entry.original ?? entry.path));
    expect(
      packageImports.filter((specifier) => !specifier.startsWith("./") && !specifier.startsWith("../") && !/^react(\/|$)/.test(specifier)),
    ).toEqual([]);
    expect(result.outputFiles).toHaveLength(1);
    console.log(`the application's browser bundle: ${(result.outputFiles[0]!.contents.byteLength / 1024).toFixed(1)} KiB minified`);
  });

  it("runs a tool round trip through the installed testing kit, one PedelecError class across entries", async () => {
    const output = JSON.parse(await run(process.execPath, ["round-trip.mjs"], appDirectory)) as Record<string, unknown>;
    expect(output).toMatchObject({
      replies: ['Saved {"id":1,"title":"Milk"}'],
      refusedIsPedelecError: true,
      refusedCode: "INVALID_INPUT",
      browserHasPedelec: true,
    });
    expect(output.reactExports).toEqual(expect.arrayContaining(["PedelecProvider", "usePedelec", "usePedelecSession", "useTool"]));
  });

  it("runs the README's round trip as written", async () => {
    const output = await run(process.execPath, ["readme-round-trip.mjs"], appDirectory);
    expect(output.trim()).toBe('Saved: {"id":1,"note":{"title":"Milk"}}');
  });

  it("installed nothing but itself (no dependency to fetch, React not forced on the application)", async () => {
    const linked = new Set(linkedPackages.map((name) => name.split("/")[0]));
    const names = (await readdir(join(appDirectory, "node_modules"))).filter((name) => !linked.has(name) && !name.startsWith("."));
    expect(names).toEqual([packageName.split("/")[0]]);
    expect(await readdir(join(appDirectory, "node_modules", packageName.split("/")[0]!))).toEqual([packageName.split("/")[1]]);
  });
});
