import { builtinModules } from "node:module";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { browserBundleOptions } from "../scripts/browser-bundle-options.mjs";

const nodeBuiltins = new Set(builtinModules.flatMap((name: string) => [name, `node:${name}`]));

describe("the browser bundle", () => {
  it("is self-contained and pulls in no Node built-in", async () => {
    const result = await build({ ...browserBundleOptions(), write: false, metafile: true, logLevel: "silent" });
    const inputs = Object.entries(result.metafile.inputs);
    expect(inputs.some(([path]) => path.endsWith("src/index.ts"))).toBe(true);
    // The protocol comes from its TypeScript source, not a build of it.
    expect(inputs.some(([path]) => path.endsWith("protocol/src/page-wire.ts"))).toBe(true);
    const builtinImports = inputs.flatMap(([path, input]) =>
      input.imports
        .filter((entry) => entry.path.startsWith("node:") || nodeBuiltins.has(entry.path) || entry.external === true)
        .map((entry) => `${path} → ${entry.path}`),
    );
    expect(builtinImports).toEqual([]);
    expect(inputs.filter(([path]) => path.startsWith("node:") || nodeBuiltins.has(path))).toEqual([]);
    const outputs = Object.entries(result.metafile.outputs).filter(([path]) => path.endsWith(".js"));
    expect(outputs).toHaveLength(1);
    // No bare import is left, so a plain <script type="module"> can load it.
    expect(outputs[0]?.[1].imports).toEqual([]);
    expect(outputs[0]?.[1].exports.sort()).toEqual(
      ["DEFAULT_BRIDGE_TIMEOUT_MS", "DEFAULT_EXTENSION_ID", "Pedelec", "PedelecError", "PedelecSession", "defineTool"].sort(),
    );
  });
});
