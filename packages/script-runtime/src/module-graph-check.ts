import { execFile } from "node:child_process";
import { lstat, realpath, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { isInside } from "./workspace-paths.js";

/** The flags of the pre-check: nothing fetched, no config file, no lockfile, no node_modules. */
const INFO_FLAGS = ["info", "--json", "--no-remote", "--no-npm", "--no-config", "--no-lock", "--node-modules-dir=none"];
const INFO_TIMEOUT_MS = 30_000;
const INFO_OUTPUT_LIMIT = 64 * 1024 * 1024;
const CACHE_ENTRIES = 256;

export interface GraphCheckRequest {
  denoPath: string;
  /** Core's private DENO_DIR for the pre-check. */
  denoDir: string;
  realWorkspace: string;
  /** Absolute real path of the entry. */
  entryPath: string;
  /** The merged import map written for this run. */
  importMapPath: string;
  /** The generated `pedelec:workspace` module of this run: the one module allowed outside the workspace. */
  workspaceModulePath: string;
  /** Identifies the import map's content apart from the per-run module path (the cache key). */
  importMapKey: string;
  signal?: AbortSignal;
}

interface InfoDependency {
  specifier?: string;
  code?: { specifier?: string; error?: string };
  type?: { specifier?: string; error?: string };
}
interface InfoModule {
  specifier: string;
  local?: string;
  kind?: string;
  error?: string;
  dependencies?: InfoDependency[];
}
interface InfoGraph {
  roots?: string[];
  modules?: InfoModule[];
  redirects?: Record<string, string>;
}

/** What a module file looked like when the graph was verified; any change means the graph is checked again. */
interface FileSignature {
  path: string;
  signature: string;
}

/**
 * The pre-check of a sandboxed run's static module graph (`deno info --json`), because Deno loads statically imported
 * modules without asking its read permission. Refuses any module that is not a `file:` module inside the workspace
 * (`node:` built-ins are fine), and any module the run would load that has an error.
 *
 * Verified graphs are remembered per entry and import map, keyed on every local module's (dev, ino, size, mtimeMs,
 * ctimeMs). That is sound only because the bubblewrap wall holds whatever changes between check and load (outside
 * files do not exist inside the sandbox); the check is what gives a clear refusal, not what keeps files out.
 */
export class ModuleGraphChecker {
  readonly #verified = new Map<string, FileSignature[]>();

  async check(request: GraphCheckRequest): Promise<{ cached: boolean }> {
    const key = `${request.entryPath}\0${request.importMapKey}`;
    const remembered = this.#verified.get(key);
    if (remembered !== undefined && (await unchanged(remembered))) return { cached: true };
    this.#verified.delete(key);
    const graph = await runInfo(request);
    const files = await verifyGraph(graph, request);
    if (this.#verified.size >= CACHE_ENTRIES) {
      const oldest = this.#verified.keys().next().value;
      if (oldest !== undefined) this.#verified.delete(oldest);
    }
    this.#verified.set(key, files);
    return { cached: false };
  }
}

function refuse(message: string): never {
  throw new PedelecError("DENO_ENTRY_INVALID", message);
}

function runInfo(request: GraphCheckRequest): Promise<InfoGraph> {
  const args = [...INFO_FLAGS, `--import-map=${request.importMapPath}`, request.entryPath];
  return new Promise((resolve, reject) => {
    execFile(
      request.denoPath,
      args,
      {
        // Nothing of the caller's environment: DENO_* variables and proxies change what Deno does.
        env: { DENO_DIR: request.denoDir, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
        cwd: request.realWorkspace,
        timeout: INFO_TIMEOUT_MS,
        maxBuffer: INFO_OUTPUT_LIMIT,
        killSignal: "SIGKILL",
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      },
      (error, stdout, stderr) => {
        if (request.signal?.aborted) {
          reject(new PedelecError("DENO_CANCELLED", "the run was cancelled while its modules were being checked"));
          return;
        }
        if (error !== null) {
          reject(new PedelecError("DENO_ENTRY_INVALID", `the module graph could not be read: ${firstLines(stderr) || error.message}`));
          return;
        }
        try {
          resolve(JSON.parse(stdout) as InfoGraph);
        } catch {
          reject(new PedelecError("DENO_UNAVAILABLE", "deno info printed something that is not JSON"));
        }
      },
    );
  });
}

async function verifyGraph(graph: InfoGraph, request: GraphCheckRequest): Promise<FileSignature[]> {
  const modules = graph.modules ?? [];
  const files: FileSignature[] = [];
  for (const target of Object.values(graph.redirects ?? {})) {
    if (!target.startsWith("file:")) refuse(`the module graph redirects to ${target}, which is not a workspace file`);
  }
  // Where each module is comes first: a module outside the workspace is refused without quoting its error, which
  // may hold a line of the outside file.
  for (const module of modules) {
    const specifier = module.specifier;
    if (specifier.startsWith("node:")) continue;
    if (!specifier.startsWith("file:")) {
      refuse(`the module ${specifier} is not a workspace file: remote, npm:, jsr: and data: modules are not allowed in the sandbox`);
    }
    const path = module.local ?? fileURLToPathOrRefuse(specifier);
    if (path === request.workspaceModulePath) continue;
    if (!isInside(request.realWorkspace, path)) refuse(`the module ${specifier} is outside the workspace`);
    let real: string | undefined;
    try {
      real = await realpath(path);
    } catch {
      // A missing module is reported below with Deno's own message.
    }
    if (real !== undefined && !isInside(request.realWorkspace, real)) {
      refuse(`the module ${specifier} resolves outside the workspace through a symlink`);
    }
    if (real !== undefined) files.push({ path, signature: await signatureOf(path) });
  }
  const loaded = modulesLoadedAtRun(graph);
  for (const module of modules) {
    if (module.error !== undefined && loaded.has(module.specifier)) refuse(`the module ${module.specifier} cannot be loaded: ${module.error}`);
    for (const dependency of module.dependencies ?? []) {
      if (dependency.code?.error !== undefined) {
        refuse(`the import ${JSON.stringify(dependency.specifier)} in ${module.specifier} cannot be resolved: ${dependency.code.error}`);
      }
    }
  }
  return files;
}

/** Modules reached from the roots through code imports (type-only imports are not loaded by `deno run`). */
function modulesLoadedAtRun(graph: InfoGraph): Set<string> {
  const bySpecifier = new Map((graph.modules ?? []).map((module) => [module.specifier, module]));
  const redirects = graph.redirects ?? {};
  const loaded = new Set<string>();
  const queue = [...(graph.roots ?? [])];
  while (queue.length > 0) {
    let specifier = queue.pop() as string;
    specifier = redirects[specifier] ?? specifier;
    if (loaded.has(specifier)) continue;
    loaded.add(specifier);
    for (const dependency of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (dependency.code?.specifier !== undefined) queue.push(dependency.code.specifier);
    }
  }
  return loaded;
}

function fileURLToPathOrRefuse(specifier: string): string {
  try {
    return fileURLToPath(specifier);
  } catch {
    return refuse(`the module ${specifier} is not a usable file path`);
  }
}

async function signatureOf(path: string): Promise<string> {
  // Both the link itself and what it points at: replacing either changes the signature.
  const [own, target] = await Promise.all([lstat(path, { bigint: true }), stat(path, { bigint: true })]);
  const describe = (info: typeof own) => `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
  return `${describe(own)}|${describe(target)}`;
}

async function unchanged(files: FileSignature[]): Promise<boolean> {
  try {
    for (const file of files) if ((await signatureOf(file.path)) !== file.signature) return false;
    return true;
  } catch {
    return false;
  }
}

function firstLines(text: string): string {
  return text.trim().split("\n").slice(0, 5).join("\n");
}
