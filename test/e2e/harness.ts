import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readFile, readdir, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { isZombie } from "@pedelec/core/process-stat";
// @ts-expect-error -- plain ESM helper without type declarations
import { startStaticServer } from "../../examples/todo-board/serve.mjs";

const run = promisify(execFile);
export const repoRoot = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const extensionDir = join(repoRoot, "packages/extension/dist");
const pedelecBin = join(repoRoot, "packages/cli/bin/pedelec.js");
const standInDir = join(repoRoot, "test/stand-ins/claude");
const sdkBundle = join(repoRoot, "packages/sdk/dist/pedelec.browser.js");

export interface StaticServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface E2eOptions {
  /** Register the native host for this profile (default true). */
  installHost?: boolean;
  /** Start Core before the browser (default false: the native host has to start it). */
  startCore?: boolean;
  /** Site folder to serve instead of the SDK test page. */
  siteDir?: string;
}

export interface E2eEnvironment {
  home: string;
  userDataDir: string;
  env: NodeJS.ProcessEnv;
  context: BrowserContext;
  server: StaticServer;
  /** The same server under the other loopback name: a different origin. */
  otherOriginUrl: string;
  launchedAt: number;
  launchMs: number;
  pedelec(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

const SDK_TEST_PAGE = `<!doctype html>
<meta charset="utf-8">
<title>Pedelec SDK test page</title>
<script type="module">
  import * as sdk from "./pedelec.browser.js";
  window.sdk = sdk;
  window.sdkReady = true;
</script>`;

/** A fresh PEDELEC_HOME, browser profile, test site and real Chromium with the unpacked extension. */
export async function setUpE2e(options: E2eOptions = {}): Promise<E2eEnvironment> {
  const home = await mkdtemp(join(tmpdir(), "pedelec-e2e-home-"));
  const userDataDir = await mkdtemp(join(tmpdir(), "pedelec-e2e-profile-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PEDELEC_HOME: home,
    PEDELEC_PROVIDER_PATH: standInDir,
    CLAUDE_CONFIG_DIR: join(home, "claude-state"),
  };
  const pedelec = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [pedelecBin, ...args], { env, cwd: repoRoot });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? 1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
    }
  };
  if (options.installHost !== false) {
    const installed = await pedelec("install", "--browser", "chromium", "--user-data-dir", userDataDir);
    if (installed.code !== 0) throw new Error(`pedelec install failed: ${installed.stderr}`);
  }
  if (options.startCore) {
    const started = await pedelec("start", "--detach");
    if (started.code !== 0) throw new Error(`pedelec start failed: ${started.stderr}`);
  }

  let siteDir = options.siteDir;
  let ownSite: string | undefined;
  if (!siteDir) {
    ownSite = await mkdtemp(join(tmpdir(), "pedelec-e2e-site-"));
    await writeFile(join(ownSite, "index.html"), SDK_TEST_PAGE);
    await copyFile(sdkBundle, join(ownSite, "pedelec.browser.js"));
    siteDir = ownSite;
  }
  const server = (await startStaticServer({ root: siteDir, host: "127.0.0.1", port: 0 })) as StaticServer;

  const launchedAt = performance.now();
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      `--disable-extensions-except=${extensionDir}`,
      `--load-extension=${extensionDir}`,
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    env: env as Record<string, string>,
  });
  const launchMs = performance.now() - launchedAt;

  return {
    home,
    userDataDir,
    env,
    context,
    server,
    otherOriginUrl: server.url.replace("127.0.0.1", "localhost"),
    launchedAt,
    launchMs,
    pedelec,
    async close() {
      await context.close().catch(() => undefined);
      await server.close().catch(() => undefined);
      await pedelec("stop");
      await killProcessesWorkingIn(home);
      await rm(home, { recursive: true, force: true });
      await rm(userDataDir, { recursive: true, force: true });
      if (ownSite) await rm(ownSite, { recursive: true, force: true });
    },
  };
}

export interface ProcessInFolder {
  pid: number;
  /** NUL-separated command line, as /proc has it. */
  commandLine: string;
}

/** Live processes (zombies excluded) whose working directory is `folder` or inside it. */
export async function processesWorkingIn(folder: string): Promise<ProcessInFolder[]> {
  const found: ProcessInFolder[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => "");
    if ((cwd !== folder && !cwd.startsWith(`${folder}/`)) || isZombie(pid)) continue;
    found.push({ pid, commandLine: await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "") });
  }
  return found;
}

/**
 * A Core that was killed cannot stop its provider processes; reap whatever still runs inside this test's home so
 * nothing outlives the test.
 */
async function killProcessesWorkingIn(folder: string): Promise<void> {
  for (const { pid } of await processesWorkingIn(folder)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/** Reads the pid of the Core serving this environment's PEDELEC_HOME. */
export async function corePidOf(environment: E2eEnvironment): Promise<number> {
  return Number.parseInt(await readFile(join(environment.home, "run", "core.lock"), "utf8"), 10);
}

/** Opens the SDK test page at `baseUrl` and waits until the SDK module has loaded. */
export async function openSdkPage(environment: E2eEnvironment, baseUrl = environment.server.url): Promise<Page> {
  const page = await environment.context.newPage();
  await page.goto(baseUrl);
  await page.waitForFunction(() => (window as unknown as { sdkReady?: boolean }).sdkReady === true, undefined, { timeout: 10_000 });
  return page;
}

/**
 * Plays the user in the approval popup the extension opens: waits for it, then clicks approve or reject
 * for `origin`.
 */
export async function answerApproval(context: BrowserContext, origin: string, choice: "approve" | "reject"): Promise<void> {
  const isPopup = (page: Page): boolean => page.url().includes("/popup.html") && !page.isClosed();
  const deadline = Date.now() + 15_000;
  for (;;) {
    // The newest popup first: an older one may still be open, showing this question too, while it closes itself.
    const popup = context.pages().filter(isPopup).at(-1) ?? (await context.waitForEvent("page", { predicate: isPopup, timeout: 15_000 }));
    try {
      await popup.locator(`button[data-action="${choice}"][data-origin="${origin}"]`).click({ timeout: Math.max(1, deadline - Date.now()) });
      return;
    } catch (error) {
      if (!popup.isClosed() || Date.now() > deadline) throw error;
    }
  }
}
