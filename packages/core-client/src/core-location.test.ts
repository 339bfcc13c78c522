import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { locateCore } from "./core-location.js";

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
});
