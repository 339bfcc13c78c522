import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readFile, readdir, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { readdirSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { isZombie } from "@pedelec/core/process-stat";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { attempt, installRecorder } from "./page-scripts.js";
import { startStaticServer } from "../../examples/todo-board/serve.mjs";

const run = promisify(execFile);
export const repoRoot = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const extensionDir = join(repoRoot, "packages/extension/dist");
const pedelecBin = join(repoRoot, "packages/cli/bin/pedelec.js");
/** Every provider stand-in's folder (test/stand-ins/<provider>/), searched before anything else for provider CLIs. */
const standInPath = readdirSync(join(repoRoot, "test/stand-ins"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => join(repoRoot, "test/stand-ins", entry.name))
  .join(delimiter);
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
  /** The browser's environment (what the native host inherits); by default the test's, with its PEDELEC_HOME. */
  browserEnv?: NodeJS.ProcessEnv;
  /**
   * Where provider CLIs are searched first (PEDELEC_PROVIDER_PATH, which `pedelec install` records); by default every
   * stand-in's folder under test/stand-ins.
   */
  providerPath?: string;
  /** Variables added to the environment of Pedelec's commands and of the browser (a private HOME, a CLI's gateway…). */
  extraEnv?: Record<string, string>;
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
  /**
   * Quits Chromium (its native host goes with it; Core keeps running) and starts it again on the same profile, so the
   * extension's stored approvals and the host registration are still there. Updates `context` and returns the new one.
   */
  reopenBrowser(): Promise<BrowserContext>;
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
    PEDELEC_PROVIDER_PATH: options.providerPath ?? standInPath,
    // The claude stand-in's conversations; a real claude is given a private HOME through extraEnv instead.
    ...(options.providerPath === undefined ? { CLAUDE_CONFIG_DIR: join(home, "claude-state") } : {}),
    ...options.extraEnv,
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

  const browserEnv = options.browserEnv ?? env;
  const launchedAt = performance.now();
  let context = await launchBrowser(userDataDir, browserEnv);
  const launchMs = performance.now() - launchedAt;

  const environment: E2eEnvironment = {
    home,
    userDataDir,
    env,
    context,
    server,
    otherOriginUrl: server.url.replace("127.0.0.1", "localhost"),
    launchedAt,
    launchMs,
    pedelec,
    async reopenBrowser() {
      await context.close();
      context = await launchBrowser(userDataDir, browserEnv);
      environment.context = context;
      return context;
    },
    async close() {
      await context.close().catch(() => undefined);
      await server.close().catch(() => undefined);
      await pedelec("stop");
      await killProcessesWorkingIn(home);
      // The native host may still be writing its last log line as Chrome's exit reaches it.
      await rm(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      await rm(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      if (ownSite) await rm(ownSite, { recursive: true, force: true });
    },
  };
  return environment;
}

/** Real Chromium on profile `userDataDir` with the unpacked extension loaded; `env` is what the native host inherits. */
function launchBrowser(userDataDir: string, env: NodeJS.ProcessEnv): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
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

/** Live stand-in agent processes working inside `home`. */
export async function standInProcessesIn(home: string): Promise<number[]> {
  return (await processesWorkingIn(home)).filter((found) => found.commandLine.includes("stand-ins/claude")).map((found) => found.pid);
}

/** Opens the SDK page, creates a session with the recorder installed, and approves the origin. */
export async function approvedSession(environment: E2eEnvironment, baseUrl = environment.server.url, extra = "") {
  const page = await openSdkPage(environment, baseUrl);
  await installRecorder(page);
  const origin = new URL(baseUrl).origin;
  const created = attempt<{ sessionId: string; workspace: { path: string } }>(page, `return await window.create(${extra});`);
  await answerApproval(environment.context, origin, "approve");
  const result = await created;
  if (!result.ok) throw new Error(`createSession failed: ${result.code} ${result.message}`);
  return { page, sessionId: result.value.sessionId, workspace: result.value.workspace };
}

/** Native host processes serving PEDELEC_HOME `home` (found through their command line and environment). */
export async function nativeHostPidsFor(home: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (!commandLine.includes("native-host-entry")) continue;
    const environ = await readFile(`/proc/${entry}/environ`, "utf8").catch(() => "");
    if (environ.split("\0").includes(`PEDELEC_HOME=${home}`) && !isZombie(Number(entry))) found.push(Number(entry));
  }
  return found;
}

/** The extension's approval window (`popup.html`), while it is open. */
export function isApprovalWindow(page: Page): boolean {
  return page.url().includes("/popup.html") && !page.isClosed();
}

export interface ApprovalWindowWatch {
  /** Approval windows opened since the watch began. */
  opened(): number;
  /** The most approval windows that were open at one moment. */
  mostOpenAtOnce(): number;
  /** Approval windows open right now. */
  openNow(): number;
}

/** Counts approval windows as Playwright sees them open and close. */
export function watchApprovalWindows(context: BrowserContext): ApprovalWindowWatch {
  let opened = 0;
  let open = 0;
  let most = 0;
  const track = (page: Page): void => {
    opened += 1;
    open += 1;
    most = Math.max(most, open);
    page.once("close", () => {
      open -= 1;
    });
  };
  for (const page of context.pages().filter(isApprovalWindow)) track(page);
  context.on("page", (page) => {
    if (isApprovalWindow(page)) track(page);
    // A window may be announced before it committed its URL.
    else
      void page.waitForURL(/\/popup\.html/, { timeout: 10_000 }).then(
        () => track(page),
        () => undefined,
      );
  });
  return { opened: () => opened, mostOpenAtOnce: () => most, openNow: () => open };
}

/** The newest open approval window, waiting up to 15 s for one to open. */
export async function approvalWindow(context: BrowserContext): Promise<Page> {
  const open = context.pages().filter(isApprovalWindow).at(-1);
  const page = open ?? (await context.waitForEvent("page", { predicate: isApprovalWindow, timeout: 15_000 }));
  // A window closing just now fails this wait; callers see it closed and look again.
  await page.waitForLoadState("domcontentloaded").catch(() => undefined);
  return page;
}

/**
 * Plays the user in the folder question of the approval window: waits until the window shows `origin` asking for
 * `path`, then clicks allow-folder or deny-folder.
 */
export async function answerWorkspaceConsent(context: BrowserContext, origin: string, path: string, choice: "allow" | "deny"): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const window = await approvalWindow(context);
    try {
      const button = window.locator(`button[data-action="${choice}-folder"][data-origin="${origin}"][data-path="${path}"]`);
      await button.click({ timeout: Math.max(1, deadline - Date.now()) });
      return;
    } catch (error) {
      if (!window.isClosed() || Date.now() > deadline) throw error;
    }
  }
}

/** Opens one of the extension's own pages, e.g. `options.html`, as a tab. */
export async function openExtensionPage(environment: E2eEnvironment, file: string): Promise<Page> {
  const page = await environment.context.newPage();
  await page.goto(`chrome-extension://${DEFAULT_EXTENSION_ID}/${file}`);
  return page;
}

export interface E2eEnvironmentWithState extends E2eEnvironment {
  /** A fresh folder the browser's environment names, for a provider CLI's own state; removed on close. */
  stateFolder: string;
}

/**
 * The harness's environment with `variable` (such as CODEX_HOME, or HOME itself) set to a fresh folder in the
 * browser's environment, which the native host, Core and the agents inherit: the stand-ins keep their conversations
 * there, like the real CLIs, where a test can look for them.
 */
export async function setUpE2eWithStateFolder(variable: string, options: E2eOptions = {}): Promise<E2eEnvironmentWithState> {
  const stateFolder = await mkdtemp(join(tmpdir(), `pedelec-e2e-${variable.toLowerCase().replaceAll("_", "-")}-`));
  const removeStateFolder = () => rm(stateFolder, { recursive: true, force: true });
  try {
    const environment = await setUpE2e({ ...options, browserEnv: { ...(options.browserEnv ?? process.env), [variable]: stateFolder } });
    const close = async () => {
      try {
        await environment.close();
      } finally {
        await removeStateFolder();
      }
    };
    return { ...environment, stateFolder, close };
  } catch (error) {
    await removeStateFolder();
    throw error;
  }
}

/**
 * Plays the user granting Full Access to `origin` in the extension's options page: grant, read the warning, confirm.
 * Returns the origin's row.
 */
export async function grantFullAccess(environment: E2eEnvironment, origin: string) {
  const options = await openExtensionPage(environment, "options.html");
  const row = options.locator(`[data-origin="${origin}"]`);
  await row.locator('[data-action="grant-full-access"]').click();
  const confirm = row.locator('[data-action="confirm-full-access"]');
  await confirm.waitFor({ timeout: 10_000 });
  const warning = (await row.textContent()) ?? "";
  if (!/any of your files/i.test(warning)) throw new Error(`the Full Access confirmation does not warn about the user's files: ${warning}`);
  await confirm.click();
  await row.locator('[data-action="revoke-full-access"]').waitFor({ timeout: 10_000 });
  return row;
}
