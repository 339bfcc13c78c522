// esbuild options for the agent-facing commands, shared by scripts/bundle.mjs and the bundle test. Workspace packages
// are taken from their TypeScript sources, so bundling never depends on build order.
import { fileURLToPath } from "node:url";
import { englishOnlyZodLocalesPlugin, workspaceSourcePlugin } from "../../../scripts/browser-bundle.mjs";

const packageRoot = fileURLToPath(new URL("..", import.meta.url));

/** Where `pedelec-cli` finds the check of a tool-spec answer, next to itself. */
const TOOL_SPEC_CHECK_FILE = "./pedelec-cli-tool-spec.cjs";

/** Where `pedelec-cli mcp` finds the MCP server, next to itself. */
const MCP_COMMAND_FILE = "./pedelec-cli-mcp.cjs";

/**
 * `tool-spec-result.js` and `mcp-command.js` stay out of pedelec-cli's file: the one needs the schema library, the other
 * the MCP library, and `tool-call` needs neither.
 */
const onDemandPartsPlugin = {
  name: "on-demand-parts",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\/tool-spec-result\.js$/ }, () => ({ path: TOOL_SPEC_CHECK_FILE, external: true }));
    pluginBuild.onResolve({ filter: /^\.\/mcp-command\.js$/ }, () => ({ path: MCP_COMMAND_FILE, external: true }));
  },
};

const common = {
  absWorkingDir: packageRoot,
  outdir: "dist/agent-commands",
  bundle: true,
  minify: true,
  platform: "node",
  target: "node20",
  legalComments: "none",
  logLevel: "warning",
};

/** @returns {import("esbuild").BuildOptions[]} */
export function agentCommandBuilds() {
  return [
    // Node 20 starts a CommonJS file several milliseconds sooner than an ES module (no module loader to set up), and
    // agents run pedelec-cli for every tool call.
    {
      ...common,
      entryPoints: { "pedelec-cli": "src/pedelec-cli-entry.ts" },
      format: "cjs",
      outExtension: { ".js": ".cjs" },
      plugins: [workspaceSourcePlugin, onDemandPartsPlugin],
    },
    {
      ...common,
      entryPoints: { "pedelec-cli-tool-spec": "src/tool-spec-result.ts" },
      format: "cjs",
      outExtension: { ".js": ".cjs" },
      plugins: [workspaceSourcePlugin, englishOnlyZodLocalesPlugin],
    },
    {
      ...common,
      entryPoints: { "pedelec-cli-mcp": "src/mcp-command.ts" },
      format: "cjs",
      outExtension: { ".js": ".cjs" },
      plugins: [workspaceSourcePlugin, englishOnlyZodLocalesPlugin],
    },
    {
      ...common,
      entryPoints: { "pedelec-ts-runtime": "src/pedelec-ts-runtime-entry.ts" },
      format: "esm",
      outExtension: { ".js": ".mjs" },
      plugins: [workspaceSourcePlugin, englishOnlyZodLocalesPlugin],
    },
  ];
}
