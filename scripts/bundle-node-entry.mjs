// One-file bundles of the Node programs that start when a page first asks for the agent (Core, the native host).
// Node resolving and loading a few hundred separate modules took most of their start; one file loads in a fraction,
// and with a V8 code cache made at build time, from a rehearsal of the program's start, Node skips parsing and
// compiling most of that file too.
//
// For `dist/<name>.js` the build writes, next to it:
//   <name>.bundle.cjs         the program Node runs: compiles the code below with the cache, then runs it
//   <name>.bundle.code.cjs    every module the entry needs, as one CommonJS file
//   <name>.bundle.code.cache  V8's code cache for it
// CommonJS because Node 20 accepts a code cache only for scripts (vm.Script), not for ES modules.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import Module, { createRequire } from "node:module";
import { basename, dirname, join, relative, resolve } from "node:path";
import { Script } from "node:vm";

/**
 * Our modules import Zod as `import { z } from "zod"`, which makes its whole namespace reachable: all ~60 message
 * locales and the JSON Schema converters, 450 KiB minified that Node would parse at every start. `import * as z from
 * "zod"` names the same exports and lets the bundler keep only those used, so the bundle reads our modules in that form.
 */
const ZOD_NAMED_IMPORT = 'import { z } from "zod";';
const zodNamespaceImports = {
  name: "zod-namespace-imports",
  setup(build) {
    build.onLoad({ filter: /\/packages\/[^/]+\/dist\/.+\.js$/ }, async ({ path }) => {
      const source = await readFile(path, "utf8");
      if (!source.includes(ZOD_NAMED_IMPORT)) return undefined;
      return { contents: source.replaceAll(ZOD_NAMED_IMPORT, 'import * as z from "zod";'), loader: "js" };
    });
  },
};

/**
 * Run as a script, the code has no module loader for `import()`. A lazily imported Node built-in (`await
 * import("node:net")`) becomes a module that requires it, which the bundle loads on demand like its own modules.
 */
const builtinDynamicImports = {
  name: "builtin-dynamic-imports",
  setup(build) {
    build.onResolve({ filter: /^node:/ }, ({ path, kind }) =>
      kind === "dynamic-import" ? { path, namespace: "builtin-require" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "builtin-require" }, ({ path }) => ({
      contents: `module.exports = require(${JSON.stringify(path)});`,
      loader: "js",
    }));
  },
};

// The ES module code's `import.meta`, given to it as CommonJS sees its own file. Strict mode, as ES modules are.
const CODE_BANNER = [
  '"use strict";',
  'const importMetaUrl = require("node:url").pathToFileURL(__filename).href;',
  'const importMetaResolve = (specifier) => require("node:url").pathToFileURL(require.resolve(specifier)).href;',
].join("\n");

/** Prints whether V8 accepts the cache (argv[2]) for the code (argv[1]), compiled as the program compiles it. */
const CACHE_CHECK = `
const { readFileSync } = require("node:fs");
const [code, cache] = process.argv.slice(1);
const wrapped = require("node:module").wrap(readFileSync(code, "utf8"));
const script = new (require("node:vm").Script)(wrapped, { filename: code, cachedData: readFileSync(cache) });
process.stdout.write(script.cachedDataRejected ? "refused" : "accepted");`;

/**
 * The program: compiles the bundled code with its V8 code cache and runs it. With `rehearsal`, it compiles without a
 * cache and writes one when the process exits, holding everything that run compiled.
 */
function loaderSource(codeName, cacheName, { rehearsal = false } = {}) {
  const header = rehearsal
    ? `// Rehearses ${codeName} (a bundle, see scripts/bundle-node-entry.mjs) and writes its V8 code cache at exit.`
    : `// Runs ${codeName} (a bundle, see scripts/bundle-node-entry.mjs) with the V8 code cache made when it was built, so
// Node skips parsing and compiling most of it. V8 refuses a cache made by another Node.js, and then compiles as usual.`;
  const readCache = rehearsal
    ? ""
    : `let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  // No cache: compile without one.
}
`;
  const writeCache = rehearsal
    ? `process.on("exit", () => require("node:fs").writeFileSync(cacheFile, script.createCachedData()));\n`
    : "";
  return `"use strict";
${header}
const { readFileSync } = require("node:fs");
const { createRequire, wrap } = require("node:module");
const { join } = require("node:path");
const { Script } = require("node:vm");

const codeFile = join(__dirname, ${JSON.stringify(codeName)});
const cacheFile = join(__dirname, ${JSON.stringify(cacheName)});
${readCache}const options = { filename: codeFile${rehearsal ? "" : ", cachedData"} };
const script = new Script(wrap(readFileSync(codeFile, "utf8")), options);
${writeCache}const codeModule = { exports: {} };
script.runInThisContext().call(codeModule.exports, codeModule.exports, createRequire(codeFile), codeModule, codeFile, __dirname);
`;
}

/**
 * Bundles `entry` (a module tsc built into `packageDir/dist`), see the top of this file. The outputs sit in the folder
 * of `entry`, so code that finds files from its own location (`new URL("../programs/…", import.meta.url)`) lands
 * where it did before bundling; the checks below prove it for every such path in the output.
 *
 * `external`: packages that must load from node_modules at run time: native addons, and packages that find files
 * next to themselves. Each must resolve from the bundle to the same file as from the package. (Packages the code loads
 * on first use with `createRequire` are not seen by the bundler and stay in node_modules as well.)
 *
 * `rehearse(program)`: starts `program` (a path for `node`) the way a user's first request starts it, lets it do its
 * start-up and makes it exit, cleanly; resolves once it has. The code cache then holds all that start compiled, not
 * only the top level of each module: that took a further fifth off Core's start where it was measured.
 */
export async function bundleNodeEntry({ packageDir, entry, external = [], rehearse }) {
  const entryPath = resolve(packageDir, entry);
  const folder = dirname(entryPath);
  const name = basename(entryPath, ".js");
  const programPath = join(folder, `${name}.bundle.cjs`);
  const codePath = join(folder, `${name}.bundle.code.cjs`);
  const cachePath = join(folder, `${name}.bundle.code.cache`);
  for (const path of [programPath, codePath, cachePath]) await rm(path, { force: true });

  const result = await build({
    absWorkingDir: packageDir,
    entryPoints: [entryPath],
    outfile: codePath,
    bundle: true,
    minify: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    external,
    plugins: [zodNamespaceImports, builtinDynamicImports],
    define: { "import.meta.url": "importMetaUrl", "import.meta.resolve": "importMetaResolve" },
    banner: { js: CODE_BANNER },
    metafile: true,
    logLevel: "warning",
  });
  const output = result.metafile.outputs[relative(packageDir, codePath)];
  if (output === undefined) throw new Error(`esbuild wrote no ${codePath}`);
  // Every module must be in the bundle or required (see builtinDynamicImports).
  const dynamicImports = output.imports.filter((imported) => imported.kind === "dynamic-import" && imported.external);
  if (dynamicImports.length > 0) {
    const names = dynamicImports.map((imported) => imported.path).join(", ");
    throw new Error(`${entry} loads ${names} with import(); bundle it, or load it with createRequire`);
  }
  const code = await readFile(codePath, "utf8");
  for (const [, path] of code.matchAll(/new URL\("([^"]+)",importMetaUrl\)/g)) {
    if (!existsSync(join(folder, path))) throw new Error(`the bundle of ${entry} looks for ${path} next to itself, and it is missing`);
  }
  const fromBundle = createRequire(codePath);
  for (const [, specifier] of code.matchAll(/importMetaResolve\("([^"]+)"\)/g)) fromBundle.resolve(specifier);
  const fromPackage = createRequire(join(packageDir, "package.json"));
  for (const specifier of external) {
    if (fromBundle.resolve(specifier) !== fromPackage.resolve(specifier)) {
      throw new Error(`${specifier} resolves differently from the bundle of ${entry}`);
    }
  }

  const rehearsalPath = join(folder, `${name}.bundle.rehearsal.cjs`);
  await writeFile(rehearsalPath, loaderSource(basename(codePath), basename(cachePath), { rehearsal: true }));
  try {
    await rehearse(rehearsalPath);
    if (!existsSync(cachePath)) throw new Error("it ended without writing the code cache");
  } catch (error) {
    // The program works without the rehearsal's cache, only starts slower: a cache of the top level of each module
    // (what compiling alone produces) is the fallback, and the build goes on.
    console.warn(`the rehearsal of ${entry} failed, so its code cache holds less: ${error.message}`);
    await writeFile(cachePath, new Script(Module.wrap(code), { filename: codePath }).createCachedData());
  } finally {
    await rm(rehearsalPath, { force: true });
  }
  const cache = await readFile(cachePath);
  await writeFile(programPath, loaderSource(basename(codePath), basename(cachePath)));
  // The cache is only worth shipping if a fresh Node accepts it.
  if (execFileSync(process.execPath, ["-e", CACHE_CHECK, codePath, cachePath], { encoding: "utf8" }) !== "accepted") {
    throw new Error(`V8 refuses the code cache of ${codePath}`);
  }

  const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
  const modules = Object.keys(output.inputs).length;
  console.log(`${relative(packageDir, programPath)}: ${kib(output.bytes)} of code from ${modules} modules, ${kib(cache.length)} of code cache`);
  return programPath;
}
