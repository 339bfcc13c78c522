import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "./core-daemon.js";

const standIn = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";

let home: string;
let core: RunningCore | undefined;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-core-probes-"));
});
afterEach(async () => {
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

/** A `claude` that logs each invocation's arguments, one line each, then becomes the stand-in. */
async function countingClaude(): Promise<{ directory: string; invocations: () => Promise<string[]> }> {
  const directory = join(home, "provider-bin");
  const log = join(home, "claude-invocations.log");
  await mkdir(directory);
  await writeFile(join(directory, "claude"), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${standIn}' "$@"\n`);
  await chmod(join(directory, "claude"), 0o755);
  const invocations = async () => (await readFile(log, "utf8").catch(() => "")).split("\n").filter((line) => line !== "");
  return { directory, invocations };
}

describe("Core provider checks", () => {
  it("serves 100 concurrent createSession requests with one shared --version probe", async () => {
    const claude = await countingClaude();
    // More than the 50 live sessions one origin may have by default.
    await writeFile(join(home, "settings.json"), JSON.stringify({ limits: { liveSessionsPerOrigin: 100 } }));
    core = await startCore({
      ...process.env,
      PEDELEC_HOME: home,
      PEDELEC_PROVIDER_PATH: claude.directory,
      CLAUDE_CONFIG_DIR: join(home, "claude-state"),
    });
    const pages = await Promise.all(Array.from({ length: 4 }, () => CoreConnection.open(core!.paths.socketPath)));

    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, (_, index) => pages[index % pages.length]!.request("createSession", { provider: "claude" }, ORIGIN)),
    );

    const failures = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [(outcome.reason as Error).message] : []));
    const probes = (await claude.invocations()).filter((line) => line === "--version");
    expect({ succeeded: outcomes.length - failures.length, probes: probes.length, firstFailure: failures[0] }).toEqual({
      succeeded: 100,
      probes: 1,
      firstFailure: undefined,
    });
    for (const page of pages) page.close();
  });
});
