import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PROVIDER_CODES } from "@pedelec/protocol/domain";

const packagesDir = fileURLToPath(new URL("../../../", import.meta.url));

/** The shipped source files of every package: not tests, not test support, not built output. */
async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && entry.name !== "dist" && entry.name !== "testing" && entry.name !== "fixtures")
        files.push(...(await sourceFiles(path)));
    } else if (/\.(ts|tsx|mts|mjs)$/.test(entry.name) && !/\.test(-d)?\.|\.kit\.test\./.test(entry.name)) {
      files.push(path);
    }
  }
  return files;
}

describe("provider knowledge", () => {
  it("stays in the provider's folder: no comparison with a provider code anywhere else", async () => {
    const codes = PROVIDER_CODES.join("|");
    const comparison = new RegExp(`[!=]==\\s*"(${codes})"|"(${codes})"\\s*[!=]==|case\\s+"(${codes})"\\s*:`);
    const found: string[] = [];
    let scanned = 0;
    const packages = await readdir(packagesDir, { withFileTypes: true });
    for (const entry of packages) {
      if (!entry.isDirectory()) continue;
      const srcDir = join(packagesDir, entry.name, "src");
      const files = await sourceFiles(srcDir).catch(() => []);
      for (const file of files) {
        scanned += 1;
        const path = relative(packagesDir, file).split(sep).join("/");
        const owner = /^core\/src\/providers\/([^/]+)\//.exec(path)?.[1];
        const lines = (await readFile(file, "utf8")).split("\n");
        lines.forEach((line, index) => {
          const match = comparison.exec(line);
          if (match === null) return;
          const code = match[1] ?? match[2] ?? match[3];
          if (owner !== code) found.push(`${path}:${index + 1}: ${line.trim()}`);
        });
      }
    }
    // Core's session layer, the CLI and the SDK are all read; a provider's own folder may compare with its own code.
    expect(scanned).toBeGreaterThan(100);
    expect(found).toEqual([]);
  });
});
