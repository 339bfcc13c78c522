// Bundles of the Node programs that start when a page first asks for the agent (Core, the native host). Node resolving
// and loading a few hundred separate modules took most of their start; a bundle loads in a fraction, and with a V8 code
// cache made at build time, from a rehearsal of the program's start, Node skips parsing and compiling most of it too.
// What the entry loads with import() is a later part, read only when first imported.
//
// For `dist/<name>.js` the build writes, next to it:
//   <name>.bundle.cjs          the program Node runs: compiles each part with its cache, then runs it
//   <name>.bundle.code.cjs     the first part: every module the entry imports, as one CommonJS file
//   <name>.bundle.code.cache   V8's code cache for it
//   <name>.bundle.later.cjs    the later part (when there is one) and its cache, <name>.bundle.later.cache
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
    build.onResolve({ filter: /^node:/ }, ({ path, kind }) => (kind === "dynamic-import" ? { path, namespace: "builtin-require" } : undefined));
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

/** What the first part requires to load the later part (whose exports are `r<n>`, the modules it starts from). */
const LATER_PART_ID = "pedelec-bundle:later-part";
/** What the later part requires for a module the first part holds (`s<n>`, one of the first part's exports). */
const FIRST_PART_PREFIX = "pedelec-bundle:first-part/";

/**
 * The program: compiles each part with its V8 code cache and runs it, the later part on its first require. With
 * `rehearsal`, it compiles without a cache and writes one per part that ran when the process exits, holding everything
 * that run compiled. `parts` are [code file, cache file] names, the later part's absent for a one-part bundle.
 */
function loaderSource(parts, { rehearsal = false } = {}) {
  const [[firstCode, firstCache], later] = parts;
  const header = rehearsal
    ? `// Rehearses ${firstCode} (a bundle, see scripts/bundle-node-entry.mjs) and writes the V8 code cache of each part at exit.`
    : `// Runs ${firstCode} (a bundle, see scripts/bundle-node-entry.mjs) with the V8 code cache made when it was built, so
// Node skips parsing and compiling most of it. V8 refuses a cache made by another Node.js, and then compiles as usual.`;
  const compile = rehearsal
    ? `const script = new Script(wrap(readFileSync(codeFile, "utf8")), { filename: codeFile });
  process.on("exit", () => writeFileSync(join(__dirname, cacheName), script.createCachedData()));`
    : `let cachedData;
  try {
    cachedData = readFileSync(join(__dirname, cacheName));
  } catch {
    // No cache: compile without one.
  }
  const script = new Script(wrap(readFileSync(codeFile, "utf8")), { filename: codeFile, cachedData });`;
  const laterPart = later
    ? `
// The later part: what the code loads with import() and the first part does not hold, compiled on its first import().
// The modules both use exist once, in the first part, which hands them over.
let laterExports;
const laterPart = () =>
  (laterExports ??= runPart(${JSON.stringify(later[0])}, ${JSON.stringify(later[1])}, (id) =>
    id.startsWith(${JSON.stringify(FIRST_PART_PREFIX)}) ? firstExports[id.slice(${FIRST_PART_PREFIX.length})] : undefined,
  ));
`
    : "";
  const firstRequire = later ? `(id) => (id === ${JSON.stringify(LATER_PART_ID)} ? laterPart() : undefined)` : "() => undefined";
  return `"use strict";
${header}
const { readFileSync${rehearsal ? ", writeFileSync" : ""} } = require("node:fs");
const { createRequire, wrap } = require("node:module");
const { join } = require("node:path");
const { Script } = require("node:vm");

/** Compiles and runs one part as CommonJS; \`requirePart\` answers the ids that name the other part. */
function runPart(codeName, cacheName, requirePart) {
  const codeFile = join(__dirname, codeName);
  ${compile}
  const nodeRequire = createRequire(codeFile);
  const partRequire = Object.assign((id) => requirePart(id) ?? nodeRequire(id), nodeRequire);
  const partModule = { exports: {} };
  script.runInThisContext().call(partModule.exports, partModule.exports, partRequire, partModule, codeFile, __dirname);
  return partModule.exports;
}
${laterPart}
const firstExports = runPart(${JSON.stringify(firstCode)}, ${JSON.stringify(firstCache)}, ${firstRequire});
`;
}

/**
 * Splits the module graph of `entryPath` (paths relative to `packageDir`, as esbuild's metafile names them): the
 * first part is what the entry imports statically; the later part is what it loads with import() and nothing imports
 * statically. `shared` are the first part's modules the later part imports: they exist once, in the first part.
 * A package both parts use is copied into each, which is only allowed for `copiedPackages`. Null when the entry
 * loads none of its own modules with import().
 */
async function splitModuleGraph({ packageDir, entryPath, external, copiedPackages, plugins }) {
  const { metafile } = await build({
    absWorkingDir: packageDir,
    entryPoints: [entryPath],
    outdir: join(packageDir, "graph"),
    write: false,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    external,
    plugins,
    metafile: true,
    logLevel: "silent",
  });
  const isFile = (path) => !path.includes(":");
  const walk = (roots, follows) => {
    const seen = new Set();
    for (const stack = [...roots]; stack.length > 0; ) {
      const path = stack.pop();
      if (seen.has(path)) continue;
      seen.add(path);
      for (const imported of metafile.inputs[path]?.imports ?? []) {
        if (!imported.external && isFile(imported.path) && follows(imported)) stack.push(imported.path);
      }
    }
    return seen;
  };
  const first = walk([relative(packageDir, entryPath)], (imported) => imported.kind !== "dynamic-import");
  const laterRoots = new Set();
  for (const path of first) {
    for (const imported of metafile.inputs[path]?.imports ?? []) {
      if (imported.kind === "dynamic-import" && !imported.external && isFile(imported.path) && !first.has(imported.path)) {
        laterRoots.add(imported.path);
      }
    }
  }
  if (laterRoots.size === 0) return null;
  const later = walk(laterRoots, (imported) => !first.has(imported.path));
  const shared = new Set();
  for (const path of later) {
    for (const imported of metafile.inputs[path]?.imports ?? []) {
      if (first.has(imported.path)) shared.add(imported.path);
    }
  }
  const packageOf = (path) => /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1];
  const copied = new Set([...shared].map(packageOf).filter((name) => name !== undefined));
  const unexpected = [...copied].filter((name) => !copiedPackages.includes(name));
  if (unexpected.length > 0) {
    throw new Error(`both parts of ${entryPath} use ${unexpected.join(", ")}; list it in copiedPackages if two copies are safe`);
  }
  const absolute = (paths) => [...paths].map((path) => resolve(packageDir, path));
  return { laterRoots: absolute(laterRoots), shared: absolute([...shared].filter((path) => packageOf(path) === undefined)) };
}

/**
 * Resolves each import through `redirect(path, kind)`, given the file it resolves to: an esbuild resolution in its
 * place, or undefined to keep it. A redirection into the `later-part` namespace loads one export of the later part.
 */
function redirectImports(redirect) {
  return {
    name: "redirect-imports",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async ({ path, kind, importer, resolveDir, pluginData }) => {
        if (pluginData?.redirecting || path.startsWith("node:")) return undefined;
        if (path === LATER_PART_ID) return { path, external: true };
        const resolved = await build.resolve(path, { kind, importer, resolveDir, pluginData: { redirecting: true } });
        return resolved.errors.length > 0 || resolved.external ? undefined : redirect(resolved.path, kind);
      });
      build.onLoad({ filter: /.*/, namespace: "later-part" }, ({ path }) => ({
        contents: `module.exports = require(${JSON.stringify(LATER_PART_ID)}).${path};`,
        loader: "js",
      }));
    },
  };
}

/**
 * Bundles `entry` (a module tsc built into `packageDir/dist`), see the top of this file. The outputs sit in the folder
 * of `entry`, so code that finds files from its own location (`new URL("../programs/…", import.meta.url)`) lands
 * where it did before bundling; the checks below prove it for every such path in the output.
 *
 * When the entry loads some of its modules with import(), those (and what only they use) become a later part, read
 * and compiled on the first such import(): the program's start reads only what it runs first.
 *
 * `external`: packages that must load from node_modules at run time: native addons, and packages that find files
 * next to themselves. Each must resolve from the bundle to the same file as from the package. (Packages the code loads
 * on first use with `createRequire` are not seen by the bundler and stay in node_modules as well.)
 *
 * `copiedPackages`: packages both parts may hold a copy of, because two copies behave as one (Zod keeps its settings
 * and registry on globalThis for that reason).
 *
 * `rehearse(program)`: starts `program` (a path for `node`) the way a user's first request starts it, lets it do its
 * start-up and makes it exit, cleanly; resolves once it has. The code caches then hold all that start compiled, not
 * only the top level of each module: that took a further fifth off Core's start where it was measured.
 */
export async function bundleNodeEntry({ packageDir, entry, external = [], copiedPackages = [], rehearse }) {
  const entryPath = resolve(packageDir, entry);
  const folder = dirname(entryPath);
  const name = basename(entryPath, ".js");
  const programPath = join(folder, `${name}.bundle.cjs`);
  const first = { codePath: join(folder, `${name}.bundle.code.cjs`), cachePath: join(folder, `${name}.bundle.code.cache`) };
  const later = { codePath: join(folder, `${name}.bundle.later.cjs`), cachePath: join(folder, `${name}.bundle.later.cache`) };
  for (const path of [programPath, first.codePath, first.cachePath, later.codePath, later.cachePath]) await rm(path, { force: true });

  const plugins = [zodNamespaceImports, builtinDynamicImports];
  const split = await splitModuleGraph({ packageDir, entryPath, external, copiedPackages, plugins });
  const buildPart = async (part, entryOptions, partPlugins) => {
    const result = await build({
      absWorkingDir: packageDir,
      ...entryOptions,
      outfile: part.codePath,
      bundle: true,
      minify: true,
      platform: "node",
      target: "node20",
      format: "cjs",
      external,
      plugins: [...plugins, ...partPlugins],
      define: { "import.meta.url": "importMetaUrl", "import.meta.resolve": "importMetaResolve" },
      banner: { js: CODE_BANNER },
      metafile: true,
      logLevel: "warning",
    });
    part.output = result.metafile.outputs[relative(packageDir, part.codePath)];
    if (part.output === undefined) throw new Error(`esbuild wrote no ${part.codePath}`);
  };
  const source = (lines, sourcefile) => ({ stdin: { contents: lines.join("\n"), resolveDir: folder, sourcefile, loader: "js" } });
  if (split === null) {
    await buildPart(first, { entryPoints: [entryPath] }, []);
  } else {
    const { laterRoots, shared } = split;
    // The first part runs the entry and hands the modules the later part uses to it, as its exports s0, s1, …
    const firstSource = [
      `import ${JSON.stringify(entryPath)};`,
      ...shared.map((path, index) => `export * as s${index} from ${JSON.stringify(path)};`),
    ];
    await buildPart(first, source(firstSource, `${name}.first-part.js`), [
      redirectImports((path, kind) => {
        const index = laterRoots.indexOf(path);
        return kind === "dynamic-import" && index !== -1 ? { path: `r${index}`, namespace: "later-part" } : undefined;
      }),
    ]);
    const laterSource = laterRoots.map((path, index) => `export * as r${index} from ${JSON.stringify(path)};`);
    await buildPart(later, source(laterSource, `${name}.later-part.js`), [
      redirectImports((path) => {
        const index = shared.indexOf(path);
        return index === -1 ? undefined : { path: `${FIRST_PART_PREFIX}s${index}`, external: true };
      }),
    ]);
  }
  const parts = split === null ? [first] : [first, later];

  const fromPackage = createRequire(join(packageDir, "package.json"));
  for (const part of parts) {
    // Every module must be in the bundle or required (see builtinDynamicImports).
    const dynamicImports = part.output.imports.filter((imported) => imported.kind === "dynamic-import" && imported.external);
    if (dynamicImports.length > 0) {
      const names = dynamicImports.map((imported) => imported.path).join(", ");
      throw new Error(`${entry} loads ${names} with import(); bundle it, or load it with createRequire`);
    }
    part.code = await readFile(part.codePath, "utf8");
    for (const [, path] of part.code.matchAll(/new URL\("([^"]+)",importMetaUrl\)/g)) {
      if (!existsSync(join(folder, path))) throw new Error(`the bundle of ${entry} looks for ${path} next to itself, and it is missing`);
    }
    const fromBundle = createRequire(part.codePath);
    for (const [, specifier] of part.code.matchAll(/importMetaResolve\("([^"]+)"\)/g)) fromBundle.resolve(specifier);
    for (const specifier of external) {
      if (fromBundle.resolve(specifier) !== fromPackage.resolve(specifier)) {
        throw new Error(`${specifier} resolves differently from the bundle of ${entry}`);
      }
    }
  }

  const partNames = parts.map((part) => [basename(part.codePath), basename(part.cachePath)]);
  const rehearsalPath = join(folder, `${name}.bundle.rehearsal.cjs`);
  await writeFile(rehearsalPath, loaderSource(partNames, { rehearsal: true }));
  try {
    await rehearse(rehearsalPath);
  } catch (error) {
    // The program works without the rehearsal's caches, only starts slower: below, a cache of the top level of each
    // module (what compiling alone produces) stands in for each one missing, and the build goes on.
    console.warn(`the rehearsal of ${entry} failed, so its code cache holds less: ${error.message}`);
  } finally {
    await rm(rehearsalPath, { force: true });
  }
  for (const part of parts) {
    if (!existsSync(part.cachePath)) {
      console.warn(`the rehearsal of ${entry} did not run ${basename(part.codePath)}; its code cache holds the top level only`);
      await writeFile(part.cachePath, new Script(Module.wrap(part.code), { filename: part.codePath }).createCachedData());
    }
    // The cache is only worth shipping if a fresh Node accepts it.
    if (execFileSync(process.execPath, ["-e", CACHE_CHECK, part.codePath, part.cachePath], { encoding: "utf8" }) !== "accepted") {
      throw new Error(`V8 refuses the code cache of ${part.codePath}`);
    }
  }
  await writeFile(programPath, loaderSource(partNames));

  const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
  for (const part of parts) {
    const cache = await readFile(part.cachePath);
    const modules = Object.keys(part.output.inputs).length;
    console.log(
      `${relative(packageDir, part.codePath)}: ${kib(part.output.bytes)} of code from ${modules} modules, ${kib(cache.length)} of code cache`,
    );
  }
  return programPath;
}
