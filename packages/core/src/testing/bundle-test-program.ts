import { build } from "esbuild";

/**
 * `source` (TypeScript that imports modules by absolute path) as one ES module a test can run with `node`: the way a
 * test runs the code under test in a real process of its own. Imports resolve from `resolveDir`.
 */
export async function bundleTestProgram(source: string, resolveDir: string): Promise<string> {
  const bundled = await build({
    stdin: { contents: source, resolveDir, loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  return bundled.outputFiles[0]!.text;
}
