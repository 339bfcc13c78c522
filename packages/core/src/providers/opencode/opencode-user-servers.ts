import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import stripJsonComments from "strip-json-comments";

/** The names OpenCode reads a configuration file under, in a configuration folder. */
const FOLDER_FILE_NAMES = ["config.json", "opencode.json", "opencode.jsonc"];

/** A configuration file larger than this is not one a user wrote; OpenCode's own would not read it either. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/**
 * The configuration files of the user's own OpenCode that may name MCP servers, once a sandbox run has the project's
 * configuration switched off (OPENCODE_DISABLE_PROJECT_CONFIG), in the places OpenCode 1.18 reads them: the global
 * folder (`$XDG_CONFIG_HOME/opencode`, or OPENCODE_CONFIG_DIR), the file OPENCODE_CONFIG names, and the `~/.opencode`
 * and OPENCODE_CONFIG_DIR folders. OpenCode merges OPENCODE_CONFIG_CONTENT over all of these, so a server switched off
 * there stays off. An organisation's remote or managed configuration is applied after it and is not the user's to
 * change; it is left as it is.
 */
export function opencodeUserConfigFiles(env: Record<string, string | undefined>): string[] {
  const home = env.HOME || os.homedir();
  const globalFolder = path.join(env.XDG_CONFIG_HOME || path.join(home, ".config"), "opencode");
  const files = FOLDER_FILE_NAMES.map((name) => path.join(globalFolder, name));
  const configFolder = env.OPENCODE_CONFIG_DIR;
  if (configFolder) files.push(...FOLDER_FILE_NAMES.map((name) => path.join(configFolder, name)));
  if (env.OPENCODE_CONFIG) files.push(env.OPENCODE_CONFIG);
  files.push(path.join(home, ".opencode", "opencode.json"), path.join(home, ".opencode", "opencode.jsonc"));
  return [...new Set(files)];
}

/**
 * The names of the MCP servers the user's OpenCode configuration files define (see opencodeUserConfigFiles). A file
 * that is missing, too large, not JSONC (JSON with comments and trailing commas, as OpenCode reads it) or holds no
 * `mcp` object adds nothing.
 */
export async function opencodeUserMcpServers(env: Record<string, string | undefined>): Promise<string[]> {
  const names = new Set<string>();
  for (const file of opencodeUserConfigFiles(env)) {
    const text = await readFile(file, "utf8").catch(() => null);
    if (text === null || Buffer.byteLength(text) > MAX_CONFIG_BYTES) continue;
    let config: unknown;
    try {
      config = JSON.parse(stripJsonComments(text, { trailingCommas: true }));
    } catch {
      continue;
    }
    const mcp = typeof config === "object" && config !== null ? (config as { mcp?: unknown }).mcp : undefined;
    if (typeof mcp === "object" && mcp !== null && !Array.isArray(mcp)) for (const name of Object.keys(mcp)) names.add(name);
  }
  return [...names];
}
