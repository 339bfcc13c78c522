import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The workspace packages export what the others use, by name, and their builds leave the test helpers out: vitest
// runs those from source (`./testing/*` points into src), so nothing shipped carries them.

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The folders whose files may import a package: every package's own, the shared tests, benchmarks, examples, scripts. */
const IMPORTING_FOLDERS = ["packages", "test", "bench", "examples", "scripts"];
const SOURCE_FILE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/;
const SKIPPED_FOLDERS: ReadonlySet<string> = new Set(["node_modules", "dist"]);

/** `@pedelec/<package>/<subpath>` as an import, a dynamic import, a require, a resolve or a mock names it. */
const WORKSPACE_SPECIFIER =
  /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*|\.resolve\s*\(\s*|\bmock\s*\(\s*)["'`](@pedelec\/[a-z-]+)\/([^"'`]+)["'`]/g;

type ExportTarget = string | string[] | { [condition: string]: ExportTarget };

interface WorkspacePackage {
  name: string;
  folder: string;
  exports: Record<string, ExportTarget>;
}

function workspacePackages(): WorkspacePackage[] {
  const packagesFolder = join(ROOT, "packages");
  return readdirSync(packagesFolder)
    .map((name) => join(packagesFolder, name))
    .filter((folder) => existsSync(join(folder, "package.json")))
    .map((folder) => {
      const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as { name: string; exports?: Record<string, ExportTarget> };
      return { name: manifest.name, folder, exports: manifest.exports ?? {} };
    })
    .filter((workspacePackage) => workspacePackage.name.startsWith("@pedelec/"));
}

function targetsOf(target: ExportTarget): string[] {
  if (typeof target === "string") return [target];
  if (Array.isArray(target)) return target;
  return Object.values(target).flatMap(targetsOf);
}

/** Whether `subpath` (`./x/y`) is one of the keys of `exports`, literally or through a `*` pattern. */
function isExported(exports: Record<string, ExportTarget>, subpath: string): boolean {
  return Object.keys(exports).some((key) => {
    const star = key.indexOf("*");
    if (star === -1) return key === subpath;
    const [prefix, suffix] = [key.slice(0, star), key.slice(star + 1)];
    return subpath.length > prefix.length + suffix.length && subpath.startsWith(prefix) && subpath.endsWith(suffix);
  });
}

/** The source a built target comes from: `./dist/a/b.d.ts`, `./dist/a/b.js` or `./dist/a/b.bundle.cjs` → `src/a/b.ts`. */
function sourceOfBuiltTarget(folder: string, target: string): string | undefined {
  const built = /^\.\/dist\/(.+?)(?:\.d\.ts|\.bundle\.cjs|\.js)$/.exec(target);
  if (!built) return undefined;
  return [".ts", ".tsx"].map((extension) => join(folder, "src", `${built[1]}${extension}`)).find((path) => existsSync(path));
}

function sourceFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).flatMap((name) => {
    if (SKIPPED_FOLDERS.has(name) || name.startsWith(".")) return [];
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return SOURCE_FILE.test(name) ? [path] : [];
  });
}

/** The files each build project (the root tsconfig.json's references) compiles. */
function builtFiles(): string[] {
  const rootConfig = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile).config as { references: { path: string }[] };
  return rootConfig.references.flatMap((reference) => {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, reference.path, "tsconfig.json"),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    );
    if (parsed === undefined) throw new Error(`${reference.path}/tsconfig.json cannot be read`);
    return parsed.fileNames;
  });
}

describe("package boundaries", () => {
  const packages = workspacePackages();

  it("finds the workspace packages", () => {
    expect(packages.map((workspacePackage) => workspacePackage.name)).toEqual(
      expect.arrayContaining(["@pedelec/core", "@pedelec/protocol", "@pedelec/cli"]),
    );
  });

  it("has no package export its whole build: each built file another package may use is named", () => {
    const wholesale = packages.flatMap((workspacePackage) =>
      Object.entries(workspacePackage.exports)
        .filter(([key, target]) => key === "./*" || (key.includes("*") && targetsOf(target).some((path) => path.startsWith("./dist/"))))
        .map(([key]) => `${workspacePackage.name} exports "${key}"`),
    );
    expect(wholesale).toEqual([]);
  });

  it("has every export point at a file the package has", () => {
    const missing = packages.flatMap((workspacePackage) =>
      Object.entries(workspacePackage.exports).flatMap(([key, target]) =>
        targetsOf(target)
          .filter((path) => {
            if (path.startsWith("./dist/")) return sourceOfBuiltTarget(workspacePackage.folder, path) === undefined;
            // A pattern into the source (the test helpers): its folder must exist.
            return !existsSync(join(workspacePackage.folder, path.includes("*") ? dirname(path) : path));
          })
          .map((path) => `${workspacePackage.name} "${key}" → ${path}`),
      ),
    );
    expect(missing).toEqual([]);
  });

  it("exports every subpath the repository imports from a package", () => {
    const byName = new Map(packages.map((workspacePackage) => [workspacePackage.name, workspacePackage]));
    const files = IMPORTING_FOLDERS.flatMap((folder) => sourceFiles(join(ROOT, folder)));
    expect(files.length).toBeGreaterThan(100);
    const imported = new Set<string>();
    const unexported: string[] = [];
    for (const file of files) {
      for (const [, name, subpath] of readFileSync(file, "utf8").matchAll(WORKSPACE_SPECIFIER)) {
        imported.add(`${name}/${subpath}`);
        const target = byName.get(name!);
        if (target === undefined || !isExported(target.exports, `./${subpath}`)) unexported.push(`${relative(ROOT, file)}: ${name}/${subpath}`);
      }
    }
    // The scan sees the imports: Core's testing helpers and its entry bundle are among them.
    expect(imported).toContain("@pedelec/core/testing/core-home");
    expect(imported).toContain("@pedelec/core/core-entry");
    expect(unexported).toEqual([]);
  });

  it("builds no test helper: the packages' builds leave out every testing folder", () => {
    const files = builtFiles();
    expect(files.length).toBeGreaterThan(100);
    const helpers = files.filter((file) => relative(ROOT, file).split(sep).includes("testing")).map((file) => relative(ROOT, file));
    expect(helpers).toEqual([]);
  });
});
