// Bundles Core's entry (scripts/bundle-node-entry.mjs): the native host starts Core when a page first asks for the
// agent, and the page waits while it loads. The package exports the bundle as `@pedelec/core/core-entry`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { locateDeno, locateDenoWith } from "@pedelec/script-runtime/deno-binary";
import { bundleNodeEntry } from "../../../scripts/bundle-node-entry.mjs";
import { bundleControlPanel } from "./bundle-control-panel.mjs";

const REHEARSAL_DEADLINE_MS = 60_000;

/**
 * Starts Core in a home of its own, sends it a ping (the path every request takes), waits for its background start
 * (the session runtime, which a page's first request needs; the asset server's port in the ping's answer shows it has
 * run) and has it shut down, which waits for the rest of it.
 */
async function rehearse(program) {
  const home = await mkdtemp(join(tmpdir(), "pedelec-core-rehearsal-"));
  const core = spawn(process.execPath, [program], { env: { ...process.env, PEDELEC_HOME: home }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  core.stdout.on("data", (chunk) => (output += chunk));
  core.stderr.on("data", (chunk) => (output += chunk));
  const exited = once(core, "exit");
  const deadline = Date.now() + REHEARSAL_DEADLINE_MS;
  try {
    for (;;) {
      const connection = await CoreConnection.open(join(home, "run", "core.sock")).catch(() => undefined);
      if (connection) {
        while ((await connection.request("ping", {})).assetPort == null) {
          if (Date.now() > deadline) throw new Error(`Core's background start did not finish for its rehearsal:\n${output}`);
          await delay(20);
        }
        await connection.request("shutdown", {});
        connection.close();
        break;
      }
      if (Date.now() > deadline || core.exitCode !== null) throw new Error(`Core did not start for its rehearsal:\n${output}`);
      await delay(20);
    }
    const [code] = await Promise.race([exited, delay(Math.max(0, deadline - Date.now()), undefined, { ref: false }).then(() => ["a timeout"])]);
    if (code !== 0) throw new Error(`Core's rehearsal ended with ${code}:\n${output}`);
  } finally {
    if (core.exitCode === null && core.signalCode === null) core.kill("SIGKILL");
    await rm(home, { recursive: true, force: true });
  }
}

const packageDir = fileURLToPath(new URL("..", import.meta.url));
// The control panel's page first: Core's rehearsal below starts the panel, which reads it.
await bundleControlPanel();
await bundleNodeEntry({
  packageDir,
  entry: "dist/core-entry.js",
  // A native addon, found by its loader next to its own files. The session store requires it on first use, and only on
  // a Node without node:sqlite, so esbuild never sees it; listed here, the build checks that the bundle resolves it.
  external: ["better-sqlite3"],
  // Core checks its first frames with zod/mini and the rest with classic Zod: one copy in each part of the bundle.
  copiedPackages: ["zod"],
  rehearse,
});

// The script runtime finds the pinned Deno by resolving its platform package from where its code runs, which is now
// the bundle: that must still be the same binary.
const fromBundle = createRequire(join(packageDir, "dist/core-entry.bundle.code.cjs")).resolve;
const unavailable = (error) => `unavailable: ${error.message}`;
const expected = await locateDeno().catch(unavailable);
const found = await locateDenoWith({ platform: process.platform, arch: process.arch, resolve: fromBundle }).catch(unavailable);
if (found !== expected) throw new Error(`the bundle finds Deno at ${found}, the script runtime at ${expected}`);
