import type { BuildOptions } from "esbuild";

/** esbuild options for dist/agent-commands (see agent-command-bundles.mjs). */
export declare function agentCommandBuilds(): BuildOptions[];
