import { builtinModules } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { browserBundleBase } from "../../../../scripts/browser-bundle.mjs";

const nodeBuiltins = new Set(builtinModules.flatMap((name: string) => [name, `node:${name}`]));
const packageRoot = fileURLToPath(new URL("../..", import.meta.url));

describe("the testing kit's entry", () => {
  it("bundles for a browser with no Node built-in and no test runner in it", async () => {
    const result = await build({
      ...browserBundleBase(),
      absWorkingDir: packageRoot,
      entryPoints: ["src/testing-kit/index.ts"],
      write: false,
      outdir: "unused",
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.entries(result.metafile.inputs);
    expect(inputs.some(([path]) => path.endsWith("src/testing-kit/test-kit.ts"))).toBe(true);
    const forbidden = inputs.flatMap(([path, input]) => [
      ...(/node_modules[\\/](vitest|@vitest|jest|@jest|expect)[\\/]/.test(path) ? [path] : []),
      ...input.imports
        .filter((entry) => entry.path.startsWith("node:") || nodeBuiltins.has(entry.path) || entry.external === true)
        .map((entry) => `${path} → ${entry.path}`),
    ]);
    expect(forbidden).toEqual([]);
    const outputs = Object.values(result.metafile.outputs).filter((output) => output.entryPoint !== undefined);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]?.imports).toEqual([]);
    expect(outputs[0]?.exports.sort()).toEqual(["PedelecTestKit", "createPedelecTestKit"]);
  });
});
