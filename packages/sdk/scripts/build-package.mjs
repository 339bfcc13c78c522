// Builds what npm publishes of @kaoruisaac/pedelec: in dist/bundle, per entry one ESM file (shared code in chunks, so
// the entries share one Pedelec class) and one declaration file; beside it, the one-file browser bundle. The protocol
// and zod are bundled in; React stays an import. The scripts come from the TypeScript sources; the declarations from
// tsc's output, which the build first brings up to date.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { rollup } from "rollup";
import { dts } from "rollup-plugin-dts";
import ts from "typescript";
import { buildBrowserBundle, englishOnlyZodLocalesPlugin, workspaceSourcePlugin } from "../../../scripts/browser-bundle.mjs";
import { browserBundleOptions } from "./browser-bundle-options.mjs";
import { checkFlattenedTypes, createInMemoryProgram, declarationDiagnostics, flattenSchemaTypes } from "./flatten-schema-types.mjs";
import { browserBundleFile, bundleDirectory, entrySpecifier, externalModules, packageEntries, packageName } from "./package-layout.mjs";

export const defaultPackageRoot = fileURLToPath(new URL("..", import.meta.url));

/** Packages whose declarations are copied into ours (types only; their code is never imported). */
const inlinedTypePackages = ["@standard-schema/spec"];

const nodeBuiltins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/**
 * Builds and writes dist/bundle. Returns what was written and the measured sizes.
 * @param {{ packageRoot?: string }} [options]
 */
export async function buildPackage({ packageRoot = defaultPackageRoot } = {}) {
  return withBuildLock(packageRoot, () => buildUnlocked(packageRoot));
}

async function buildUnlocked(packageRoot) {
  const missing = packageEntries.filter((entry) => !existsSync(join(packageRoot, entry.source)));
  if (missing.length > 0) {
    throw new Error(`entry sources missing: ${missing.map((entry) => `${entry.subpath} (${entry.source})`).join(", ")}`);
  }
  const declarations = await bundleDeclarations(packageRoot);
  const scripts = await bundleScripts(packageRoot);
  const browser = await bundleBrowser(packageRoot);
  const bundledPackages = [...new Set([...scripts.bundledPackages, ...declarations.inlinedPackages])].sort();
  const files = new Map([...scripts.files, ...declarations.files]);
  files.set("THIRD-PARTY-NOTICES.txt", thirdPartyNotices(packageRoot, bundledPackages));
  await writeDirectory(join(packageRoot, bundleDirectory), files);
  await writeFiles(packageRoot, browser.files);
  return {
    directory: join(packageRoot, bundleDirectory),
    files: [...files.keys()].sort(),
    bundledPackages,
    sizes: { ...scripts.sizes, browser: browser.size },
    flattenedTypes: declarations.flattened,
    flattenChecks: declarations.checks,
    declarationWarnings: declarations.warnings,
  };
}

/** The one-file browser build of the main entry, for pages without a bundler (no import left at all). */
async function bundleBrowser(packageRoot) {
  const options = browserBundleOptions();
  const result = await buildBrowserBundle({ ...options, absWorkingDir: packageRoot, write: false });
  const files = new Map(result.outputFiles.map((file) => [toPosix(relative(packageRoot, file.path)), file.text]));
  const code = files.get(browserBundleFile);
  if (code === undefined) throw new Error(`the browser build did not produce ${browserBundleFile}`);
  return { files, size: { minifiedBytes: Buffer.byteLength(code), gzipBytes: gzipSync(code).length } };
}

/** esbuild: one ESM module per entry, shared code in chunks/, only relative imports and React left. */
async function bundleScripts(packageRoot) {
  const options = {
    absWorkingDir: packageRoot,
    entryPoints: Object.fromEntries(packageEntries.map((entry) => [entry.name, entry.source])),
    outdir: bundleDirectory,
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    external: externalModules.flatMap((name) => [name, `${name}/*`]),
    // Readable code: an application's bundler minifies it, and its stack traces stay useful until then.
    minify: false,
    sourcemap: false,
    legalComments: "none",
    charset: "utf8",
    logLevel: "warning",
    metafile: true,
    write: false,
    plugins: [workspaceSourcePlugin, englishOnlyZodLocalesPlugin],
  };
  const result = await build(options);
  const outputDirectory = join(packageRoot, bundleDirectory);
  // esbuild marks where each module starts with a comment naming its path; a virtual module's is absolute.
  const repoPrefix = resolve(packageRoot, "../..") + sep;
  const withoutRepoPaths = (text) => text.replace(/^\/\/ .*$/gm, (line) => line.replaceAll(repoPrefix, ""));
  const files = new Map(result.outputFiles.map((file) => [toPosix(relative(outputDirectory, file.path)), withoutRepoPaths(file.text)]));

  const problems = [];
  for (const [outputPath, output] of Object.entries(result.metafile.outputs)) {
    for (const entry of output.imports) {
      const relativeImport = entry.path.startsWith("./") || entry.path.startsWith("../") || !entry.external;
      if (nodeBuiltins.has(entry.path)) problems.push(`${outputPath} imports the Node built-in ${entry.path}`);
      else if (!relativeImport && !isExternalModule(entry.path)) problems.push(`${outputPath} still imports ${entry.path}`);
    }
  }
  if (problems.length > 0) throw new Error(`the package's scripts are not self-contained:\n${problems.join("\n")}`);

  const minified = await build({ ...options, minify: true });
  const minifiedTexts = new Map(minified.outputFiles.map((file) => [toPosix(relative(outputDirectory, file.path)), file.text]));
  const sizes = measure(result.metafile, minified.metafile, minifiedTexts, packageRoot);
  return { files, bundledPackages: sizes.packages.map((item) => item.name).filter((name) => name !== "(sdk)" && name !== "(protocol)"), sizes };
}

/**
 * rollup-plugin-dts over tsc's declarations (the SDK's and the protocol's), then the protocol's zod-inferred types
 * written out.
 */
async function bundleDeclarations(packageRoot) {
  const repoRoot = resolve(packageRoot, "../..");
  const outputDirectory = join(packageRoot, bundleDirectory);
  await compileDeclarations(repoRoot, packageRoot);
  // rollup-plugin-dts warns, among others, of a public declaration that uses a type no entry exports: an application
  // whose own declarations need to name it cannot (TS2742).
  const warnings = [];
  const declarationOf = (source) => join(packageRoot, "dist", source.replace(/^src\//, "").replace(/\.tsx?$/, ".d.ts"));
  const bundle = await rollup({
    input: Object.fromEntries(packageEntries.map((entry) => [entry.name, declarationOf(entry.source)])),
    onwarn: (warning) => {
      if (warning.code !== "CIRCULAR_DEPENDENCY") warnings.push(warning.message);
    },
    plugins: [
      {
        // Workspace packages are bundled in from their declarations; everything else in node_modules stays an import.
        name: "pedelec-workspace-declarations",
        resolveId(source) {
          const workspace = /^@pedelec\/([a-z-]+)\/([a-z0-9-]+)$/.exec(source);
          if (workspace) return join(repoRoot, "packages", workspace[1], "dist", `${workspace[2]}.d.ts`);
          if (source === packageName) return declarationOf("src/index.ts");
          return null;
        },
      },
      dts({ includeExternal: inlinedTypePackages }),
    ],
  });
  const { output } = await bundle.generate({
    format: "es",
    entryFileNames: "[name].d.ts",
    // Rollup names a chunk after its first module, here a declaration file ("pedelec.d").
    chunkFileNames: (chunk) => `chunks/${chunk.name.replace(/\.d$/, "")}-[hash].d.ts`,
  });
  await bundle.close();

  const inlinedPackages = new Set();
  const bundled = new Map();
  for (const chunk of output) {
    if (chunk.type !== "chunk") continue;
    for (const id of chunk.moduleIds) {
      const name = nodeModulesPackage(id);
      if (name !== undefined) inlinedPackages.add(name);
    }
    bundled.set(join(outputDirectory, chunk.fileName), chunk.code);
  }
  const flattened = flattenSchemaTypes(bundled, { libraryModule: "zod" });
  const equality = checkFlattenedTypes(bundled, flattened.files, { libraryModule: "zod" });
  if (equality.failures.length > 0) {
    throw new Error(`written-out types differ from the schema-inferred ones:\n${equality.failures.join("\n")}`);
  }
  // As an application would see them: strict, no skipLibCheck, and the only import left is React's.
  const diagnostics = declarationDiagnostics(createInMemoryProgram(flattened.files), flattened.files);
  if (diagnostics.length > 0) throw new Error(`the bundled declarations do not type-check:\n${diagnostics.join("\n")}`);
  const files = new Map();
  for (const [fileName, text] of flattened.files) {
    const leftover = ts
      .preProcessFile(text, true, true)
      .importedFiles.map((file) => file.fileName)
      .filter((specifier) => !specifier.startsWith("./") && !specifier.startsWith("../") && !isExternalModule(specifier));
    if (leftover.length > 0) throw new Error(`${fileName} still imports ${leftover.join(", ")}`);
    files.set(toPosix(relative(outputDirectory, fileName)), withModuleComment(toPosix(relative(outputDirectory, fileName)), text));
  }
  return { files, inlinedPackages: [...inlinedPackages], flattened: flattened.flattened, checks: equality.checks, warnings };
}

/** tsc -b of the SDK (and so of the protocol): the declarations rollup reads. Up to date, it only checks. */
async function compileDeclarations(repoRoot, packageRoot) {
  const compiler = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  await new Promise((resolvePromise, reject) => {
    execFile(process.execPath, [compiler, "-b", join(packageRoot, "tsconfig.json")], { cwd: repoRoot }, (error, stdout, stderr) => {
      if (error) reject(new Error(`tsc -b ${relative(repoRoot, packageRoot)} failed:\n${stdout}${stderr}`));
      else resolvePromise();
    });
  });
}

/** Each entry's declaration file opens with what the entry is, which the reference pages show. */
function withModuleComment(fileName, text) {
  const entry = packageEntries.find((candidate) => `${candidate.name}.d.ts` === fileName);
  if (entry === undefined) return text;
  const lines = wrap(entry.description, 112).map((line) => ` * ${line}`);
  return `/**\n${lines.join("\n")}\n *\n * @module ${entrySpecifier(entry)}\n */\n${text}`;
}

function wrap(text, width) {
  const lines = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  return line === "" ? lines : [...lines, line];
}

function measure(metafile, minifiedMetafile, minifiedTexts, packageRoot) {
  // Bytes each bundled package adds to the published modules, readable and minified.
  const packages = new Map();
  for (const [{ outputs }, key] of [
    [metafile, "bytes"],
    [minifiedMetafile, "minifiedBytes"],
  ]) {
    for (const output of Object.values(outputs)) {
      for (const [path, input] of Object.entries(output.inputs)) {
        const absolute = resolve(packageRoot, path);
        const name = nodeModulesPackage(absolute) ?? (absolute.startsWith(packageRoot) ? "(sdk)" : "(protocol)");
        const entry = packages.get(name) ?? { name, bytes: 0, minifiedBytes: 0 };
        entry[key] += input.bytesInOutput;
        packages.set(name, entry);
      }
    }
  }
  // What an application that imports one entry loads: the entry and every chunk it reaches.
  const entries = packageEntries.map((entry) => {
    const reached = reachable(minifiedMetafile, `${bundleDirectory}/${entry.name}.js`);
    const texts = reached.map((output) => minifiedTexts.get(output.slice(bundleDirectory.length + 1)));
    return {
      subpath: entry.subpath,
      minifiedBytes: texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0),
      gzipBytes: texts.reduce((sum, text) => sum + gzipSync(text).length, 0),
    };
  });
  return { packages: [...packages.values()].sort((first, second) => second.bytes - first.bytes), entries };
}

function reachable(metafile, start) {
  const seen = new Set();
  const visit = (output) => {
    if (seen.has(output) || metafile.outputs[output] === undefined) return;
    seen.add(output);
    for (const entry of metafile.outputs[output].imports) {
      if (!entry.external) visit(entry.path);
    }
  };
  visit(start);
  return [...seen];
}

/** The license texts of the packages whose code or types are copied into the published files. */
function thirdPartyNotices(packageRoot, names) {
  const sections = names.map((name) => {
    const directory = packageDirectory(packageRoot, name);
    const manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8"));
    const licenseFile = readdirSync(directory).find((file) => /^licen[cs]e(\.md|\.txt)?$/i.test(file));
    const text = licenseFile === undefined ? `License: ${manifest.license}` : readFileSync(join(directory, licenseFile), "utf8").trim();
    return `${name} ${manifest.version} (${manifest.license})\n\n${text}`;
  });
  const rule = `\n\n${"-".repeat(78)}\n\n`;
  return `${packageName} includes code or type declarations from these packages.${rule}${sections.join(rule)}\n`;
}

function packageDirectory(packageRoot, name) {
  for (let directory = packageRoot; ; directory = dirname(directory)) {
    const candidate = join(directory, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(directory) === directory) throw new Error(`${name} is not installed`);
  }
}

/**
 * One build of a package at a time across processes (two test files, a test and `npm pack`): tsc writes its files in
 * place, and a second build must not read them half-written.
 */
async function withBuildLock(packageRoot, build) {
  const lock = join(packageRoot, "dist", ".package-build.lock");
  await mkdir(dirname(lock), { recursive: true });
  const deadline = Date.now() + lockWaitMs;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      // A build that died holding the lock left it behind; no build takes this long.
      if (age > lockWaitMs) await rm(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`another build of ${packageRoot} held ${lock} too long`);
      else await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
    }
  }
  try {
    return await build();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

const lockWaitMs = 5 * 60_000;

/** Writes the files, then removes whatever else is in the directory (an earlier build's chunks). */
async function writeDirectory(directory, files) {
  await writeFiles(directory, files);
  const wanted = new Set([...files.keys()].map((fileName) => join(directory, fileName)));
  for (const path of await listFiles(directory)) {
    if (!wanted.has(path)) await rm(path, { force: true });
  }
}

/** Each file is written beside its place and renamed over it: a reader (a test copying the browser bundle) never sees half a file. */
async function writeFiles(directory, files) {
  const suffix = `.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  for (const [fileName, text] of files) {
    const path = join(directory, fileName);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path + suffix, text);
    await rename(path + suffix, path);
  }
}

async function listFiles(directory) {
  const entries = await readdir(directory, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => (entry.isDirectory() ? listFiles(join(directory, entry.name)) : [join(directory, entry.name)])),
  );
  return nested.flat();
}

function isExternalModule(specifier) {
  return externalModules.some((name) => specifier === name || specifier.startsWith(`${name}/`));
}

function nodeModulesPackage(path) {
  const match = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(path);
  return match ? match[1].replace(/\\/g, "/") : undefined;
}

function toPosix(path) {
  return path.split(sep).join("/");
}
