import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectSandboxWall, probeSandboxWall } from "./sandbox-wall.js";

describe("detectSandboxWall", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pedelec-wall-"));
  });
  afterAll(async () => rm(root, { recursive: true, force: true }));

  it("finds the installed bubblewrap and remembers the answer", async () => {
    const wall = await detectSandboxWall({ PATH: "/usr/local/bin:/usr/bin:/bin" });
    expect(wall).toEqual({ kind: "bubblewrap", executable: "/usr/bin/bwrap" });
    expect(detectSandboxWall({ PATH: "/usr/local/bin:/usr/bin:/bin" })).toBe(detectSandboxWall({ PATH: "/usr/local/bin:/usr/bin:/bin" }));
  });

  it("falls back to /usr/bin/bwrap when PATH has none", async () => {
    await expect(probeSandboxWall({ PATH: root }, "linux")).resolves.toEqual({ kind: "bubblewrap", executable: "/usr/bin/bwrap" });
    await expect(probeSandboxWall({}, "linux")).resolves.toEqual({ kind: "bubblewrap", executable: "/usr/bin/bwrap" });
  });

  it("reports a bubblewrap whose smoke run fails, with how to fix it", async () => {
    const folder = join(root, "broken");
    await mkdir(folder);
    await writeFile(join(folder, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
    await chmod(join(folder, "bwrap"), 0o755);
    const wall = await probeSandboxWall({ PATH: folder }, "linux");
    expect(wall.kind).toBe("none");
    expect(wall.kind === "none" && wall.reason).toMatch(
      /No permissions to create new namespace.*apt install bubblewrap.*dnf install bubblewrap.*pacman -S bubblewrap/s,
    );
  });

  it("says the platform is not supported off Linux", async () => {
    await expect(probeSandboxWall({ PATH: "/usr/bin" }, "darwin")).resolves.toEqual({
      kind: "none",
      reason: "sandboxed scripts need bubblewrap on Linux; this platform is not supported yet",
    });
  });
});
