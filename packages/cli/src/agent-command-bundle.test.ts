import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { agentCommandBuilds } from "../scripts/agent-command-bundles.mjs";

/** Bundles one of the agent commands in memory and lists the files each output was made from. */
async function bundleInputs(entry: string): Promise<{ output: string; inputs: string[]; imports: { path: string; kind: string }[] }> {
  const options = agentCommandBuilds().find((candidate) => Object.keys(candidate.entryPoints as Record<string, string>)[0] === entry);
  if (options === undefined) throw new Error(`no build for ${entry}`);
  const result = await build({ ...options, write: false, metafile: true, logLevel: "silent" });
  const [output, meta] = Object.entries(result.metafile.outputs).find(([path]) => !path.endsWith(".map"))!;
  return { output, inputs: Object.keys(meta.inputs), imports: meta.imports.map(({ path, kind }) => ({ path, kind })) };
}

describe("the pedelec-cli bundle", () => {
  it("keeps the schema and MCP libraries off the path of every tool call", async () => {
    const { output, inputs, imports } = await bundleInputs("pedelec-cli");
    expect(output).toMatch(/pedelec-cli\.cjs$/);
    expect(inputs.some((path) => path.endsWith("protocol/src/request-client.ts"))).toBe(true);
    expect(inputs.filter((path) => /node_modules[\\/](zod|re2js|@modelcontextprotocol)[\\/]/.test(path))).toEqual([]);
    // Only the tool-spec check and the MCP server, loaded on demand, may bring them in.
    const onDemand = imports.filter((entry) => !entry.path.startsWith("node:")).sort((a, b) => a.path.localeCompare(b.path));
    expect(onDemand).toEqual([
      { path: "./pedelec-cli-mcp.cjs", kind: "dynamic-import" },
      { path: "./pedelec-cli-tool-spec.cjs", kind: "dynamic-import" },
    ]);
  });

  it("serves MCP from a file of its own, built on the MCP library", async () => {
    const { inputs } = await bundleInputs("pedelec-cli-mcp");
    expect(inputs.some((path) => path.endsWith("src/session-mcp-server.ts"))).toBe(true);
    expect(inputs.some((path) => /node_modules[\\/]@modelcontextprotocol[\\/]sdk[\\/]/.test(path))).toBe(true);
  });

  it("checks a tool spec with the protocol's own schema, in a file of its own", async () => {
    const { inputs } = await bundleInputs("pedelec-cli-tool-spec");
    expect(inputs.some((path) => path.endsWith("protocol/src/requests.ts"))).toBe(true);
    expect(inputs.some((path) => /node_modules[\\/]zod[\\/]/.test(path))).toBe(true);
  });
});
