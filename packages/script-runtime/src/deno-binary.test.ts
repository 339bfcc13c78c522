import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateDeno, locateDenoWith } from "./deno-binary.js";

describe("locateDeno", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pedelec-deno-binary-"));
  });
  afterAll(async () => rm(root, { recursive: true, force: true }));

  it("finds the pinned binary of this platform's package, not a shim", async () => {
    const path = await locateDeno();
    expect(path).toMatch(/node_modules\/@deno\/linux-x64-glibc\/deno$/);
    expect(execFileSync(path, ["--version"], { encoding: "utf8" })).toMatch(/^deno 2\.9\.6 /);
  });

  it("names the package to reinstall when it is missing", async () => {
    const lookup = {
      platform: "linux" as const,
      arch: "arm64",
      resolve: () => {
        throw new Error("Cannot find module");
      },
    };
    await expect(locateDenoWith(lookup)).rejects.toMatchObject({
      code: "DENO_UNAVAILABLE",
      message: expect.stringMatching(/@deno\/linux-arm64-glibc is not installed; reinstall/),
    });
  });

  it("refuses a platform with no pinned build", async () => {
    await expect(locateDenoWith({ platform: "freebsd", arch: "x64", resolve: () => "/nowhere/package.json" })).rejects.toMatchObject({
      code: "DENO_UNAVAILABLE",
      message: expect.stringContaining("freebsd-x64"),
    });
  });

  it("refuses a binary that is missing or not executable", async () => {
    const folder = join(root, "package");
    await mkdir(folder);
    await writeFile(join(folder, "package.json"), "{}");
    const lookup = { platform: "darwin" as const, arch: "arm64", resolve: () => join(folder, "package.json") };
    await expect(locateDenoWith(lookup)).rejects.toMatchObject({
      code: "DENO_UNAVAILABLE",
      message: expect.stringContaining("missing or not executable"),
    });
    await writeFile(join(folder, "deno"), "not a program");
    await chmod(join(folder, "deno"), 0o644);
    await expect(locateDenoWith(lookup)).rejects.toMatchObject({ code: "DENO_UNAVAILABLE" });
    await chmod(join(folder, "deno"), 0o755);
    await expect(locateDenoWith(lookup)).resolves.toBe(join(folder, "deno"));
  });

  it("looks for deno.exe on Windows", async () => {
    const folder = join(root, "windows");
    await mkdir(folder);
    await writeFile(join(folder, "deno.exe"), "");
    await chmod(join(folder, "deno.exe"), 0o755);
    await expect(locateDenoWith({ platform: "win32", arch: "x64", resolve: () => join(folder, "package.json") })).resolves.toBe(
      join(folder, "deno.exe"),
    );
  });
});
