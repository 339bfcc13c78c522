import { spawn } from "node:child_process";
import { stat, readFile } from "node:fs/promises";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { waitForCore } from "@pedelec/core-client/core-launch";
import { launchCoreDetached } from "@pedelec/core/core-launcher";
import { resolveCorePaths, type CorePaths } from "@pedelec/core/core-paths";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { CommandIo } from "./command-io.js";
import { parseCommandLine, PEDELEC_VERSION } from "./command-line.js";
import { writeLaunchers } from "./launchers.js";

export const OPEN_USAGE = `Usage: pedelec open [--print] [--json]

Opens Pedelec's control panel (sessions, live events, providers and effort profiles, origins, logs) in the default
browser, starting Core in the background first if it is not running. The browser is sent a one-time sign-in link
(good once, for a minute) that the panel swaps for a cookie; the panel's long-lived secret never goes on a command
line. The address printed is the panel's own, http://127.0.0.1:<port>/panel/, for the browser that signed in.

Options:
  --print   Only print a one-time sign-in link (open it within a minute); do not open a browser
  --json    Print { "url": … } as JSON (with --print, also "expiresAt")
  --help    Show this help; --version shows the version`;

/** The flags `pedelec open` takes besides the common ones. */
const OPEN_FLAGS = { print: { type: "boolean", default: false }, json: { type: "boolean", default: false } } as const;

/** How long `pedelec open` waits for Core to start and then for its panel to listen. */
const CORE_START_TIMEOUT_MS = 15_000;
const PANEL_START_TIMEOUT_MS = 15_000;
const PANEL_POLL_MS = 20;

/** What the panel's address looks like: loopback, a port, a secret of at least 256 bits. */
const PANEL_URL = /^http:\/\/127\.0\.0\.1:\d{1,5}\/[A-Za-z0-9_-]{43,128}\/$/;

export interface OpenCommandDependencies {
  /** Opens `url` in the user's browser; by default `opener` with the address as its last argument. */
  openUrl?: (url: string) => Promise<void>;
  /** The program (and its first arguments) the default `openUrl` runs: xdg-open (Linux), open (macOS), rundll32 (Windows). */
  opener?: readonly string[];
  /** Starts Core in the background for `paths`; by default the detached launch `pedelec start --detach` uses. */
  launchCore?: (paths: CorePaths, env: NodeJS.ProcessEnv) => Promise<unknown>;
}

/** `pedelec open [--print] [--json]`; returns the exit code. */
export async function runOpenCommand(args: readonly string[], io: CommandIo, dependencies: OpenCommandDependencies = {}): Promise<number> {
  let values: ReturnType<typeof parseCommandLine<typeof OPEN_FLAGS>>["values"];
  try {
    ({ values } = parseCommandLine(args, OPEN_FLAGS));
  } catch (error) {
    io.err(`pedelec open: ${(error as Error).message}\n\n${OPEN_USAGE}`);
    return 2;
  }
  if (values.help || values.version) {
    io.out(values.help ? OPEN_USAGE : `pedelec open ${PEDELEC_VERSION}`);
    return 0;
  }
  const paths = resolveCorePaths(io.env);
  try {
    if (!(await waitForCore(paths, 0))) {
      await writeLaunchers(paths);
      await (dependencies.launchCore ?? launchCoreDetached)(paths, io.env);
      if (!(await waitForCore(paths, CORE_START_TIMEOUT_MS))) {
        io.err(`pedelec open: Pedelec Core did not come up; see ${paths.logsDir}/core.log`);
        return 1;
      }
    }
    const secretUrl = await panelUrlOfRunningCore(paths);
    const signIn = await signInLink(secretUrl);
    if (values.print) {
      io.out(values.json ? JSON.stringify(signIn) : signIn.url);
      return 0;
    }
    const panelUrl = new URL("/panel/", secretUrl).href;
    io.out(values.json ? JSON.stringify({ url: panelUrl }) : panelUrl);
    try {
      await (dependencies.openUrl ?? ((url: string) => openInBrowser(url, dependencies.opener ?? platformOpener())))(signIn.url);
    } catch (error) {
      io.err(`pedelec open: could not open a browser (${(error as Error).message}); run \`pedelec open --print\` and open its link yourself`);
      return 1;
    }
    return 0;
  } catch (error) {
    const coded = PedelecError.from(error, "CORE_RUNTIME_UNAVAILABLE");
    io.err(`pedelec open: ${coded.message} [${coded.code}]`);
    io.err(`  ${coded.remedy}`);
    return 1;
  }
}

/**
 * The address the running Core wrote. Core writes it shortly after it starts listening; a file older than this Core
 * (left by one that was killed) is not its address, so it waits for the new one.
 */
async function panelUrlOfRunningCore(paths: CorePaths): Promise<string> {
  const connection = await CoreConnection.open(paths.socketPath);
  const { startedAt } = await connection.request("ping", {}).finally(() => connection.close());
  const startedMs = Date.parse(startedAt);
  const deadline = Date.now() + PANEL_START_TIMEOUT_MS;
  for (;;) {
    const written = await stat(paths.controlPanelUrlFile).catch(() => undefined);
    if (written !== undefined && written.mtimeMs >= startedMs - 1) {
      const url = (await readFile(paths.controlPanelUrlFile, "utf8").catch(() => "")).trim();
      if (PANEL_URL.test(url)) return url;
    }
    if (Date.now() > deadline) {
      throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", `Core is running but its control panel did not start; see ${paths.logsDir}/core.log`);
    }
    await new Promise((resolve) => setTimeout(resolve, PANEL_POLL_MS));
  }
}

/**
 * A one-time sign-in link from the running panel, asked for with the secret over loopback HTTP (never on a command
 * line): `{ url: "http://127.0.0.1:<port>/sign-in/<code>", expiresAt }`.
 */
async function signInLink(secretUrl: string): Promise<{ url: string; expiresAt: string }> {
  let response: Response;
  try {
    response = await fetch(new URL("api/sign-in-codes", secretUrl), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
      signal: AbortSignal.timeout(PANEL_START_TIMEOUT_MS),
    });
  } catch (error) {
    throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", `the control panel did not answer (${(error as Error).message})`);
  }
  const answer = (await response.json().catch(() => undefined)) as { url?: unknown; expiresAt?: unknown } | undefined;
  if (!response.ok || typeof answer?.url !== "string" || !SIGN_IN_URL.test(answer.url) || typeof answer.expiresAt !== "string") {
    throw new PedelecError(
      "CORE_RUNTIME_UNAVAILABLE",
      `the running Core's control panel hands out no sign-in links (HTTP ${response.status}); it may be an older version: run \`pedelec stop\`, then \`pedelec open\``,
    );
  }
  return { url: answer.url, expiresAt: answer.expiresAt };
}

/** What a sign-in link looks like: loopback, a port, a code of at least 256 bits. */
const SIGN_IN_URL = /^http:\/\/127\.0\.0\.1:\d{1,5}\/sign-in\/[A-Za-z0-9_-]{43,128}$/;

function platformOpener(): readonly string[] {
  return process.platform === "darwin" ? ["open"] : process.platform === "win32" ? ["rundll32", "url.dll,FileProtocolHandler"] : ["xdg-open"];
}

/** Runs `opener` with the address as its last argument (never through a shell). */
function openInBrowser(url: string, opener: readonly string[]): Promise<void> {
  const [command, ...commandArgs] = [...opener, url];
  return new Promise((resolve, reject) => {
    const child = spawn(command!, commandArgs, { detached: true, stdio: "ignore" });
    child.once("error", reject);
    child.once("spawn", () => {
      child.unref();
      resolve();
    });
  });
}
