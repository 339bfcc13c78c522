import { realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { AccessMode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { isInside } from "./workspace-paths.js";

/** The logical module scripts import Pedelec's values from; `pedelec:` keys belong to Pedelec. */
export const WORKSPACE_MODULE_SPECIFIER = "pedelec:workspace";
const RESERVED_PREFIX = "pedelec:";
export const MAX_IMPORT_MAP_BYTES = 1024 * 1024;
const MAX_MAPPINGS = 10_000;

/** An import map with every relative key and target already resolved to an absolute URL. */
export interface ResolvedImportMap {
  imports: Record<string, string>;
  scopes: Record<string, Record<string, string>>;
}

export interface ImportMapSource {
  /** The file's text as read from the workspace. */
  text: string;
  /** The map's absolute real path; relative keys and targets resolve against its folder. */
  mapPath: string;
  realWorkspace: string;
  access: AccessMode;
}

function refuse(message: string): never {
  throw new PedelecError("DENO_IMPORT_MAP_INVALID", `import map: ${message}`);
}

function isUrlLike(value: string): boolean {
  return value.startsWith("/") || value.startsWith("./") || value.startsWith("../");
}

function parseUrl(value: string, base?: URL): URL | undefined {
  try {
    return new URL(value, base);
  } catch {
    return undefined;
  }
}

/**
 * Checks a workspace import map and resolves it so it can be written to another folder: only `imports` and `scopes`,
 * string targets, no `pedelec:` keys. In the sandbox every target must be a `file:` URL or path that stays inside
 * the workspace (remote, npm:, jsr:, data: and node: targets are refused); Full Access only checks the structure.
 */
export function resolveImportMap(source: ImportMapSource): ResolvedImportMap {
  if (Buffer.byteLength(source.text) > MAX_IMPORT_MAP_BYTES) refuse(`larger than ${MAX_IMPORT_MAP_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(source.text);
  } catch (error) {
    refuse(`not valid JSON (${(error as Error).message})`);
  }
  if (!isPlainObject(parsed)) refuse("must be a JSON object");
  for (const key of Object.keys(parsed)) {
    if (key !== "imports" && key !== "scopes") refuse(`unknown top-level key ${JSON.stringify(key)}; only "imports" and "scopes" are allowed`);
  }
  const base = pathToFileURL(`${dirname(source.mapPath)}/`);
  const counter = { mappings: 0 };
  const imports = parsed.imports === undefined ? {} : resolveMappings(parsed.imports, "imports", base, source, counter);
  const scopes: Record<string, Record<string, string>> = {};
  if (parsed.scopes !== undefined) {
    if (!isPlainObject(parsed.scopes)) refuse(`"scopes" must be an object`);
    for (const [scope, mappings] of Object.entries(parsed.scopes)) {
      const scopeUrl = parseUrl(scope, base) ?? refuse(`scope ${JSON.stringify(scope)} is not a URL or path`);
      scopes[scopeUrl.href] = resolveMappings(mappings, `scopes[${JSON.stringify(scope)}]`, base, source, counter);
    }
  }
  return { imports, scopes };
}

/** The map Deno gets: the workspace's entries plus `pedelec:workspace` pointing at this run's generated module. */
export function withWorkspaceModule(map: ResolvedImportMap, moduleUrl: string): ResolvedImportMap {
  return { imports: { ...map.imports, [WORKSPACE_MODULE_SPECIFIER]: moduleUrl }, scopes: map.scopes };
}

function resolveMappings(value: unknown, where: string, base: URL, source: ImportMapSource, counter: { mappings: number }): Record<string, string> {
  if (!isPlainObject(value)) refuse(`${where} must be an object`);
  const resolved: Record<string, string> = {};
  for (const [key, target] of Object.entries(value)) {
    counter.mappings += 1;
    if (counter.mappings > MAX_MAPPINGS) refuse(`more than ${MAX_MAPPINGS} mappings`);
    if (key === "") refuse(`${where} has an empty key`);
    if (key.toLowerCase().startsWith(RESERVED_PREFIX)) refuse(`the key ${JSON.stringify(key)} is reserved for Pedelec`);
    if (typeof target !== "string") refuse(`${where}[${JSON.stringify(key)}] must be a string`);
    const normalizedKey = isUrlLike(key) ? (parseUrl(key, base)?.href ?? refuse(`the key ${JSON.stringify(key)} is not a valid path`)) : key;
    if (normalizedKey.toLowerCase().startsWith(RESERVED_PREFIX)) refuse(`the key ${JSON.stringify(key)} is reserved for Pedelec`);
    const targetUrl =
      (isUrlLike(target) ? parseUrl(target, base) : parseUrl(target)) ??
      refuse(`${where}[${JSON.stringify(key)}] → ${JSON.stringify(target)} is not a URL or a relative path`);
    if (key.endsWith("/") && !targetUrl.href.endsWith("/")) {
      refuse(`${where}[${JSON.stringify(key)}] maps a prefix (ending in "/") to a target that does not end in "/"`);
    }
    if (source.access === "sandbox")
      checkSandboxTarget(targetUrl, `${where}[${JSON.stringify(key)}] → ${JSON.stringify(target)}`, source.realWorkspace);
    resolved[normalizedKey] = targetUrl.href;
  }
  return resolved;
}

function checkSandboxTarget(target: URL, label: string, realWorkspace: string): void {
  if (target.protocol !== "file:")
    refuse(`${label} is not a workspace file (remote, npm:, jsr:, data: and node: targets are not allowed in the sandbox)`);
  let path: string;
  try {
    path = fileURLToPath(target);
  } catch {
    refuse(`${label} is not a usable file path`);
  }
  if (!isInside(realWorkspace, path)) refuse(`${label} points outside the workspace`);
  const real = realpathOfExistingPart(path);
  if (!isInside(realWorkspace, real)) refuse(`${label} resolves outside the workspace through a symlink`);
}

/** The real path of `path`, or of its nearest existing ancestor with the rest appended (a target may not exist yet). */
function realpathOfExistingPart(path: string): string {
  let existing = path;
  let rest = "";
  for (;;) {
    try {
      return join(realpathSync(existing), rest);
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return path;
      rest = rest === "" ? basename(existing) : join(basename(existing), rest);
      existing = parent;
    }
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
