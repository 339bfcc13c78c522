import { SESSION_TOOL_SERVER_NAME } from "@pedelec/protocol/session-tool-server";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { z } from "zod";
import { runCliSubcommand } from "../cli-subcommand.js";

/** What Pedelec reads of `codex mcp list --json`: each configured server's name and whether it is on. */
const serverListSchema = z.array(z.object({ name: z.string(), enabled: z.boolean() }));

/**
 * The MCP servers the user's own codex configuration turns on for this workspace (`config.toml`, and a trusted
 * project's `.codex/config.toml`), as codex itself resolves them: `codex mcp list --json`, run in the workspace with the
 * turn's environment. It lists the configuration only; no server is started. A sandbox session cannot go on without
 * knowing them, so a listing codex could not give is PROVIDER_FAILED (PROVIDER_UNAVAILABLE when codex cannot start), and a
 * cancelled turn stops waiting for it.
 */
export async function codexUserMcpServers(
  executablePath: string,
  workspacePath: string,
  env: Record<string, string>,
  signal: AbortSignal,
): Promise<string[]> {
  const run = await runCliSubcommand(executablePath, ["mcp", "list", "--json"], workspacePath, signal, env);
  if (signal.aborted) throw signal.reason;
  if (run?.spawnError) {
    throw new PedelecError("PROVIDER_UNAVAILABLE", `codex could not be started: ${run.spawnError.message}`, { spawnErrorCode: run.spawnError.code });
  }
  let servers: z.infer<typeof serverListSchema> | undefined;
  if (run !== null && run.exitCode === 0) {
    try {
      servers = serverListSchema.parse(JSON.parse(run.stdout));
    } catch {
      servers = undefined;
    }
  }
  if (servers === undefined) {
    throw new PedelecError(
      "PROVIDER_FAILED",
      "codex did not list its MCP servers, so a sandbox session cannot leave the user's own out of the turn",
      { command: "codex mcp list --json", exitCode: run?.exitCode ?? null, stderr: run?.stderr.slice(-2048) ?? "" },
    );
  }
  return servers.filter((server) => server.enabled && server.name !== SESSION_TOOL_SERVER_NAME).map((server) => server.name);
}

/**
 * One `-c` override that switches the named servers off. codex splits a `-c` key at every dot and reads no quoted key
 * there, so `mcp_servers.<name>.enabled=false` cannot name a server with a dot in its name; an inline table as the
 * value of `mcp_servers` can, and codex merges it into the configured servers instead of replacing them. Keys are
 * TOML basic strings, which JSON's string syntax writes.
 */
export function codexServersOffFlags(names: readonly string[]): string[] {
  if (names.length === 0) return [];
  return ["-c", `mcp_servers={${names.map((name) => `${JSON.stringify(name)}={enabled=false}`).join(",")}}`];
}
