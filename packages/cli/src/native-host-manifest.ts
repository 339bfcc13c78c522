import { constants } from "node:fs";
import { access, readFile, stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { NATIVE_HOST_NAME } from "@pedelec/protocol/native-wire";

/** The file a Chromium browser reads to find and trust a native messaging host. */
export interface NativeHostManifest {
  name: string;
  description: string;
  path: string;
  type: "stdio";
  allowed_origins: string[];
}

export const EXTENSION_ID_PATTERN = /^[a-p]{32}$/;

export function extensionOrigin(extensionId: string): string {
  return `chrome-extension://${extensionId}/`;
}

export function nativeHostManifest(hostPath: string, extensionIds: readonly string[]): NativeHostManifest {
  return {
    name: NATIVE_HOST_NAME,
    description: "Pedelec native messaging host: connects the Pedelec extension to the Pedelec desktop runtime.",
    path: hostPath,
    type: "stdio",
    allowed_origins: extensionIds.map(extensionOrigin),
  };
}

/**
 * What is wrong with the manifest at `file` as the browser would read it, or null when the browser would start our
 * host from it for `extensionId`: present, JSON, our name, stdio, an absolute path to an executable file, the
 * extension among the allowed origins.
 */
export async function manifestProblem(file: string, extensionId: string, options: { checkExecutable?: boolean } = {}): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? `no manifest at ${file}` : `cannot read ${file}: ${(error as Error).message}`;
  }
  let manifest: Partial<Record<keyof NativeHostManifest, unknown>>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return `${file} is not a JSON object`;
    manifest = parsed as typeof manifest;
  } catch {
    return `${file} is not valid JSON`;
  }
  if (manifest.name !== NATIVE_HOST_NAME) return `${file} names the host ${JSON.stringify(manifest.name)}, not ${NATIVE_HOST_NAME}`;
  if (manifest.type !== "stdio") return `${file} has type ${JSON.stringify(manifest.type)}, not "stdio"`;
  if (typeof manifest.path !== "string" || !isAbsolute(manifest.path)) return `${file} does not give the host launcher as an absolute path`;
  if (options.checkExecutable !== false) {
    try {
      if (!(await stat(manifest.path)).isFile()) return `the host launcher ${manifest.path} is not a file`;
      await access(manifest.path, constants.X_OK);
    } catch {
      return `the host launcher ${manifest.path} is missing or not executable`;
    }
  }
  const origins = Array.isArray(manifest.allowed_origins) ? manifest.allowed_origins : [];
  if (!origins.includes(extensionOrigin(extensionId))) {
    return `${file} does not allow the Pedelec extension ${extensionId} (allowed: ${origins.map(String).join(", ") || "none"})`;
  }
  return null;
}
