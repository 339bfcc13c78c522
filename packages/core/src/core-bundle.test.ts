import { spawn, type ChildProcess } from "node:child_process";
import { readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { waitForCore } from "@pedelec/core-client/core-launch";

// Core as the native host starts it: the program the package exports (scripts/bundle-node-entry.mjs), in two parts.
const program = fileURLToPath(import.meta.resolve("@pedelec/core/core-entry"));
const firstPart = fileURLToPath(new URL("../dist/core-entry.bundle.code.cjs", import.meta.url));
const laterPart = fileURLToPath(new URL("../dist/core-entry.bundle.later.cjs", import.meta.url));
const ORIGIN = "http://localhost:5173";
const START_DEADLINE_MS = 15_000;

let home: string;
let core: ChildProcess | undefined;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-core-bundle-"));
});
afterEach(async () => {
  if (core && core.exitCode === null && core.signalCode === null) {
    const exited = new Promise((resolve) => core?.once("exit", resolve));
    core.kill("SIGTERM");
    await exited;
  }
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

describe("Core's bundle", () => {
  it("starts from a first part without classic Zod or the session store, which come with the later part", async () => {
    const [first, later] = await Promise.all([readFile(firstPart, "utf8"), readFile(laterPart, "utf8")]);
    // Zod names each schema class by its build: "ZodMiniString" in zod/mini, "ZodString" in classic Zod.
    expect(first).toContain('"ZodMiniString"');
    expect(first).not.toContain('"ZodString"');
    expect(later).toContain('"ZodString"');
    // lean-zod.ts gives zod/mini the English messages classic Zod sets for itself.
    expect(first).toContain("Unrecognized key");
    expect(first).not.toContain("better-sqlite3");
    expect(later).toContain("better-sqlite3");
    expect(first.length).toBeLessThan(later.length / 4);
    // Our modules both parts use are defined once, in the first part: one PedelecError class, one logger.
    expect(first).toContain('="PedelecError"');
    expect(later).not.toContain('="PedelecError"');
    expect(later).toContain('require("pedelec-bundle:first-part/');
  });

  it("answers from its first part, then serves sessions from its later part, each checking with English messages", async () => {
    core = spawn(process.execPath, [program], { env: { ...process.env, PEDELEC_HOME: home }, stdio: "ignore" });
    const socketPath = join(home, "run", "core.sock");
    expect(await waitForCore({ socketPath }, START_DEADLINE_MS)).toBe(true);
    const page = await CoreConnection.open(socketPath);
    try {
      // Checked by zod/mini in the first part (the later part loads 50 ms after Core listens, or with the first
      // session request), with the same English messages as classic Zod.
      await expect(page.request("ping", { extra: true } as never)).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("Unrecognized key"),
      });
      // Thrown in the later part (the session runtime) and answered through the first (request-reply.ts).
      await expect(page.request("createSession", { provider: "ollama" }, ORIGIN)).rejects.toMatchObject({ code: "MODEL_REQUIRED" });
      // Checked by classic Zod in the later part.
      await expect(page.request("createSession", { provider: "nope" } as never, ORIGIN)).rejects.toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringContaining("Invalid option"),
      });
    } finally {
      page.close();
    }
  });
});
