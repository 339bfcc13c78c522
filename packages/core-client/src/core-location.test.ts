import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { locateCore, windowsPipePath } from "./core-location.js";

describe("locateCore", () => {
  it.each([[{ PEDELEC_HOME: "/tmp/pedelec-home" }], [{ PEDELEC_HOME: "  relative/home  " }], [{ PEDELEC_HOME: "" }], [{}]])(
    "finds the same home, socket, logs and keys as Core's own paths for %j",
    (env) => {
      const core = resolveCorePaths(env);
      expect(locateCore(env)).toEqual({ home: core.home, socketPath: core.socketPath, logsDir: core.logsDir, keysDir: core.keysDir });
    },
  );

  it("defaults to ~/.pedelec", () => {
    expect(locateCore({}).socketPath).toBe(join(homedir(), ".pedelec", "run", "core.sock"));
  });

  it("names a pipe per user and home on Windows, as Core's own paths do", () => {
    const env = { PEDELEC_HOME: "C:\\Users\\Ada\\.pedelec", USERNAME: "Ada" };
    const core = resolveCorePaths(env, "win32");
    const located = locateCore(env, "win32");
    expect(located).toEqual({ home: core.home, socketPath: core.socketPath, logsDir: core.logsDir, keysDir: core.keysDir });
    expect(located.socketPath).toMatch(/^\\\\\.\\pipe\\pedelec-core-ada-[0-9a-f]{16}$/);
    expect(located.logsDir).toBe("C:\\Users\\Ada\\.pedelec\\logs");
    // Windows paths ignore case: the same home is the same pipe; another home or user is another.
    expect(windowsPipePath("c:\\users\\ada\\.PEDELEC", "ada")).toBe(located.socketPath);
    expect(windowsPipePath("C:\\Users\\Ada\\other", "Ada")).not.toBe(located.socketPath);
    expect(windowsPipePath("C:\\Users\\Ada\\.pedelec", "Bob")).not.toBe(located.socketPath);
  });
});
