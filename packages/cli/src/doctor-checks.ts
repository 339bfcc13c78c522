import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { lstat, mkdir, readFile, stat } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { ATTESTATION_KEY_FILE, readAttestationKey } from "@pedelec/core-client/attestation-key";
import { CoreConnection } from "@pedelec/core-client/core-client";
import type { CorePaths } from "@pedelec/core/core-paths";
import { isProcessRunning } from "@pedelec/core/process-stat";
import { ProviderLocator } from "@pedelec/core/provider-locator";
import { reportProviders, type ProviderReport } from "@pedelec/core/provider-status";
import { LoginShellPath } from "@pedelec/core/providers/login-shell-path";
import { createProviderRegistry } from "@pedelec/core/providers/provider-registry";
import { loadSettings, settingsFileSchema, type Settings } from "@pedelec/core/settings";
import { PROVIDER_CODES, PROVIDER_INSTALL_HINT_RANK, type ProviderCode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { RequestResult } from "@pedelec/protocol/requests";
import { locateDeno } from "@pedelec/script-runtime/deno-binary";
import { probeSandboxWall } from "@pedelec/script-runtime/sandbox-wall";
import type { BrowserLayout, MachineView } from "./browser-layouts.js";
import type { HostRegistrar } from "./host-registration.js";
import { manifestProblem } from "./native-host-manifest.js";
import { PROVIDER_INSTALL_REMEDIES } from "@pedelec/protocol/error-remedies";

/** One line of `pedelec doctor`: what was checked, whether it holds, what was seen, and what to do when it does not. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  /** What to run or change; null when ok. */
  fix: string | null;
}

const pass = (name: string, detail: string): DoctorCheck => ({ name, ok: true, detail, fix: null });
const fail = (name: string, detail: string, fix: string): DoctorCheck => ({ name, ok: false, detail, fix });

/**
 * The Node.js lines Pedelec supports, each as its first release that works: Node 20 from 20.19 (Vite 8), Node 22 from
 * 22.13 (jsdom 29, and `node:sqlite` without a flag). CI runs the tests on each line (scripts/test-node-lines.mjs).
 */
export const SUPPORTED_NODE_LINES = ["20.19.0", "22.13.0", "24.0.0", "26.0.0"] as const;

/** `engines.node` of the repository's package.json (a test keeps the two equal). */
export const NODE_ENGINES_RANGE = SUPPORTED_NODE_LINES.map((first) => `^${first}`).join(" || ");

function versionParts(version: string): number[] {
  return version.replace(/^v/, "").split(".").map(Number);
}

export function nodeVersionCheck(version: string): DoctorCheck {
  const name = "Node.js";
  const have = versionParts(version);
  const line = SUPPORTED_NODE_LINES.find((first) => versionParts(first)[0] === have[0]);
  const majors = SUPPORTED_NODE_LINES.map((first) => versionParts(first)[0]).join(", ");
  const then = "(https://nodejs.org), then run `npm ci` again";
  if (line === undefined) {
    return fail(
      name,
      `${version} is not a Node.js line Pedelec supports (${majors})`,
      `install Node.js 24 or another of ${NODE_ENGINES_RANGE} ${then}`,
    );
  }
  const need = versionParts(line);
  for (let index = 1; index < need.length; index += 1) {
    if ((have[index] ?? 0) > need[index]!) break;
    if ((have[index] ?? 0) < need[index]!) {
      return fail(name, `${version} is older than ${line}`, `install Node.js ${line} or a later ${need[0]}.x, or Node.js 24 ${then}`);
    }
  }
  return pass(name, `${version} (supported: ${NODE_ENGINES_RANGE})`);
}

export function browsersCheck(found: readonly BrowserLayout[], platform: MachineView["platform"]): DoctorCheck {
  const name = "Chromium-family browser";
  if (found.length > 0) return pass(name, `found ${found.map((layout) => layout.name).join(", ")}`);
  const install =
    platform === "linux"
      ? "install one, e.g. `sudo apt-get install -y chromium` or Google Chrome from https://www.google.com/chrome/"
      : "install Google Chrome (https://www.google.com/chrome/), Chromium, Microsoft Edge or Brave";
  return fail(
    name,
    "none found (no profile folder, no executable in the usual places)",
    `${install}; or name one with \`pedelec install --browser <id>\``,
  );
}

/** The browser reads our manifest, trusts the extension and can start the launcher it names. */
export async function hostRegistrationCheck(
  layout: BrowserLayout,
  registrar: HostRegistrar,
  extensionId: string,
  installHint: string,
): Promise<DoctorCheck> {
  const name = `native host for ${layout.name}`;
  const { manifestFile, registryKey } = registrar.target(layout);
  const problem = await manifestProblem(manifestFile, extensionId, { checkExecutable: registrar.platform !== "win32" });
  if (problem === null) return pass(name, `${registryKey !== undefined ? `${registryKey} → ` : ""}${manifestFile}`);
  return fail(name, problem, `run \`${installHint}\``);
}

/** Chrome's rule for an unpacked extension with a `key`: sha256 of the key, first 32 hex digits mapped 0-f → a-p. */
export function extensionIdFromKey(base64Key: string): string {
  const digest = createHash("sha256").update(Buffer.from(base64Key, "base64")).digest("hex").slice(0, 32);
  return [...digest].map((digit) => String.fromCharCode(97 + Number.parseInt(digit, 16))).join("");
}

export async function extensionIdCheck(manifestFile: string, expectedId: string): Promise<DoctorCheck> {
  const name = "extension id";
  let key: unknown;
  try {
    key = (JSON.parse(await readFile(manifestFile, "utf8")) as { key?: unknown }).key;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
    return fail(
      name,
      missing ? `the extension is not built (no ${manifestFile})` : `${manifestFile} cannot be read: ${(error as Error).message}`,
      "run `npm run build` in the Pedelec folder",
    );
  }
  if (typeof key !== "string")
    return fail(name, `${manifestFile} has no "key", so Chrome would give the extension a random id`, "rebuild the extension: `npm run build`");
  const derived = extensionIdFromKey(key);
  if (derived !== expectedId) {
    return fail(
      name,
      `the built extension's key gives ${derived}, but the host is registered for ${expectedId}`,
      `rebuild with \`npm run build\`, or register that id too: \`pedelec install --extension-id ${derived}\``,
    );
  }
  return pass(name, `${derived} (from the key in ${manifestFile})`);
}

/** What the Core check learned, for the checks after it. */
export interface CoreState {
  check: DoctorCheck;
  ping: RequestResult<"ping"> | null;
}

export interface CoreStartOptions {
  paths: CorePaths;
  /** Starts Core in the background the way the native host does; resolves its pid. */
  launchCore: () => Promise<number>;
  timeoutMs: number;
  progress: (line: string) => void;
}

/** Core answers `ping` on its socket: running already, or started now as the native host would start it. */
export async function coreCheck(options: CoreStartOptions): Promise<CoreState> {
  const name = "Core";
  const { paths } = options;
  const logHint = `see ${join(paths.logsDir, "core.log")}`;
  const existing = await pingCore(paths.socketPath);
  if (existing !== null)
    return { check: pass(name, `Core ${existing.version} answers ping on ${paths.socketPath} (pid ${existing.pid})`), ping: existing };

  // What would stop any Core from listening, found before starting one and waiting for it in vain.
  try {
    await mkdir(paths.runDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    return {
      check: fail(
        name,
        `cannot create ${paths.runDir}: ${(error as Error).message}`,
        `make PEDELEC_HOME (${paths.home}) a folder you own, or point PEDELEC_HOME elsewhere`,
      ),
      ping: null,
    };
  }
  // A Windows named pipe is no file to inspect.
  const socketInfo = paths.socketPath.startsWith("\\\\.\\pipe\\") ? undefined : await stat(paths.socketPath).catch(() => undefined);
  if (socketInfo !== undefined && !socketInfo.isSocket()) {
    const what = socketInfo.isDirectory() ? "a folder" : "a file that is not a socket";
    return {
      check: fail(
        name,
        `${paths.socketPath} is ${what}, so Core cannot listen there`,
        `remove it (\`rm -r '${paths.socketPath}'\`) and run \`pedelec doctor\` again`,
      ),
      ping: null,
    };
  }

  options.progress("Core is not running; starting it the way the native host does…");
  let pid: number;
  try {
    pid = await options.launchCore();
  } catch (error) {
    return { check: fail(name, `Core could not be started: ${(error as Error).message}`, logHint), ping: null };
  }
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    const ping = await pingCore(paths.socketPath);
    if (ping !== null) return { check: pass(name, `started Core ${ping.version} (pid ${ping.pid}); it answers ping on ${paths.socketPath}`), ping };
    if (!isProcessRunning(pid)) {
      const last = await lastLogLine(join(paths.logsDir, "core.log"));
      return { check: fail(name, `Core (pid ${pid}) exited before answering${last ? `: ${last}` : ""}`, logHint), ping: null };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { check: fail(name, `Core did not answer within ${options.timeoutMs} ms`, logHint), ping: null };
}

async function pingCore(socketPath: string): Promise<RequestResult<"ping"> | null> {
  const connection = await CoreConnection.open(socketPath).catch(() => undefined);
  if (connection === undefined) return null;
  try {
    return await connection.request("ping", {}, undefined, AbortSignal.timeout(5_000));
  } catch {
    return null;
  } finally {
    connection.close();
  }
}

async function lastLogLine(file: string): Promise<string | null> {
  const text = await readFile(file, "utf8").catch(() => "");
  const lines = text
    .trimEnd()
    .split("\n")
    .filter((line) => line.length > 0);
  return lines.at(-1)?.slice(0, 500) ?? null;
}

/** PEDELEC_HOME and its run and keys folders are the user's alone, and so is Core's socket. */
export async function permissionChecks(paths: CorePaths, socketChecked: boolean): Promise<DoctorCheck[]> {
  const uid = process.getuid?.();
  const checks: DoctorCheck[] = [];
  const folders: [string, string][] = [
    ["PEDELEC_HOME", paths.home],
    ["run folder", paths.runDir],
    ["keys folder", paths.keysDir],
  ];
  for (const [label, folder] of folders) {
    const name = `${label} permissions`;
    const info = await stat(folder).catch(() => undefined);
    if (info === undefined) {
      checks.push(
        label === "keys folder" && !socketChecked
          ? pass(name, `${folder} does not exist yet (Core creates it)`)
          : fail(name, `${folder} is missing`, "start Core once (`pedelec start --detach`); it creates it"),
      );
      continue;
    }
    const problems: string[] = [];
    if (!info.isDirectory()) problems.push("is not a folder");
    if (uid !== undefined && info.uid !== uid) problems.push(`belongs to uid ${info.uid}, not you (${uid})`);
    if ((info.mode & 0o077) !== 0) problems.push(`is open to others (mode ${(info.mode & 0o777).toString(8)})`);
    checks.push(
      problems.length === 0
        ? pass(name, `${folder} is yours alone (mode 700)`)
        : fail(name, `${folder} ${problems.join(", ")}`, `chown $(id -un) '${folder}' && chmod 700 '${folder}'`),
    );
  }
  if (socketChecked) {
    const name = "Core socket permissions";
    const info = await stat(paths.socketPath).catch(() => undefined);
    if (info === undefined) checks.push(fail(name, `${paths.socketPath} is missing`, "restart Core: `pedelec stop && pedelec start --detach`"));
    else if (uid !== undefined && info.uid !== uid)
      checks.push(
        fail(
          name,
          `${paths.socketPath} belongs to uid ${info.uid}, not you (${uid})`,
          "stop that Core and start yours: `pedelec stop && pedelec start --detach`",
        ),
      );
    else if ((info.mode & 0o077) !== 0)
      checks.push(fail(name, `${paths.socketPath} is open to others (mode ${(info.mode & 0o777).toString(8)})`, `chmod 600 '${paths.socketPath}'`));
    else checks.push(pass(name, `${paths.socketPath} is yours alone`));
  }
  return checks;
}

const ASSET_PORT_WAIT_MS = 10_000;

/**
 * The asset server answers: one real request with a ticket nobody issued must get a coded refusal. Core runs the
 * server from its background start, shortly after it first answers ping; until then ping reports no port.
 */
export async function assetServerCheck(socketPath: string, firstPing: RequestResult<"ping">): Promise<DoctorCheck> {
  const name = "asset server";
  let port = firstPing.assetPort;
  const deadline = Date.now() + ASSET_PORT_WAIT_MS;
  while (port === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    port = (await pingCore(socketPath))?.assetPort ?? null;
  }
  if (port === undefined)
    return fail(
      name,
      "this Core does not report its asset server's port",
      "restart Core with this version: `pedelec stop && pedelec start --detach`",
    );
  if (port === null)
    return fail(
      name,
      "Core reports no running asset server",
      "restart Core (`pedelec stop && pedelec start --detach`) and see logs/core.log for why the server did not start",
    );
  const ticket = randomBytes(32).toString("base64url");
  try {
    const { status, body } = await httpGet(`http://127.0.0.1:${port}/transfers/${ticket}`, 5_000);
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    if (status >= 400 && typeof code === "string")
      return pass(name, `127.0.0.1:${port} refused an unknown ticket with ${status} ${code}, as it should`);
    return fail(name, `127.0.0.1:${port} answered ${status} without a coded refusal`, "restart Core: `pedelec stop && pedelec start --detach`");
  } catch (error) {
    return fail(
      name,
      `127.0.0.1:${port} did not answer: ${(error as Error).message}`,
      "restart Core: `pedelec stop && pedelec start --detach`; a firewall must let loopback connections through",
    );
  }
}

function httpGet(url: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: "GET", timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    request.on("timeout", () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on("error", reject);
    request.end();
  });
}

/**
 * The key the native host signs Full Access with. Missing is fine while Core has not run (it makes one); damaged
 * (empty, short, not hex) means Core runs with Full Access off until the file is deleted and Core restarted.
 */
export async function attestationKeyCheck(paths: CorePaths, coreRunning: boolean): Promise<DoctorCheck> {
  const name = "Full Access key";
  const file = join(paths.keysDir, ATTESTATION_KEY_FILE);
  const info = await lstat(file).catch(() => undefined);
  if (info === undefined) {
    return coreRunning
      ? fail(name, `${file} is missing, so Full Access is refused`, "restart Core, which makes a new key: `pedelec stop && pedelec start --detach`")
      : pass(name, `${file} does not exist yet (Core creates it)`);
  }
  const restart = `rm '${file}' && pedelec stop && pedelec start --detach`;
  if (!info.isFile())
    return fail(
      name,
      `${file} is not a regular file; Full Access is off`,
      `remove it and restart Core, which makes a new key: \`${info.isDirectory() ? "rm -r" : "rm"} '${file}' && pedelec stop && pedelec start --detach\``,
    );
  try {
    readAttestationKey(paths.keysDir);
  } catch (error) {
    return fail(
      name,
      `${PedelecError.from(error, "FULL_ACCESS_ATTESTATION_INVALID").message} (${info.size} bytes); Full Access is off, sandboxed sessions still work`,
      `delete it and restart Core, which makes a new key: \`${restart}\`; then grant Full Access again where it was granted`,
    );
  }
  return pass(name, `${file} holds a key of the right size`);
}

/**
 * The settings file, read as Core reads it, and the settings the provider checks use: the file's, or the defaults when
 * it is invalid (what a Core that starts now uses: it ignores an invalid file and keeps its last good settings).
 */
export async function settingsCheck(paths: CorePaths): Promise<{ check: DoctorCheck; settings: Settings }> {
  const name = "settings";
  try {
    const settings = await loadSettings(paths.settingsFile);
    return {
      check: pass(name, existsSync(paths.settingsFile) ? `${paths.settingsFile} is valid` : `no ${paths.settingsFile} yet (defaults apply)`),
      settings,
    };
  } catch (error) {
    const message = PedelecError.from(error, "INVALID_INPUT").message;
    return {
      check: fail(
        name,
        `${message}; Core ignores the file and keeps its last good settings (the defaults when it starts), so the checks below use the defaults`,
        `correct that entry in ${paths.settingsFile}, or set it again with \`pedelec config set <key> <value>\` once the file is valid; to start from the defaults, move it aside: \`mv '${paths.settingsFile}' '${paths.settingsFile}.invalid'\``,
      ),
      settings: settingsFileSchema.parse({}),
    };
  }
}

/** Most likely installed first, by the catalogue's rank (every provider has one, or protocol does not compile). */
const HINT_ORDER: readonly ProviderCode[] = [...PROVIDER_CODES].sort(
  (first, second) => PROVIDER_INSTALL_HINT_RANK[first] - PROVIDER_INSTALL_HINT_RANK[second],
);

/**
 * One line per provider (missing is fine unless it is the default provider), then one that fails when none at all can
 * be used.
 */
export async function providerChecks(settings: Settings, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const registry = createProviderRegistry();
  const reports = await reportProviders(registry, new ProviderLocator(registry, env, new LoginShellPath(env)), settings);
  const checks = reports.map((report) => providerCheck(report, settings.defaultProvider ?? null));
  const available = reports.filter((report) => report.available);
  checks.push(
    available.length > 0
      ? pass("an agent to work with", `available: ${available.map((report) => report.name).join(", ")}`)
      : fail(
          "an agent to work with",
          "no agent CLI is available",
          ["install and sign in to at least one:", ...HINT_ORDER.map((code) => `  ${PROVIDER_INSTALL_REMEDIES[code]}`)].join("\n"),
        ),
  );
  return checks;
}

function providerCheck(report: ProviderReport, defaultProvider: ProviderCode | null): DoctorCheck {
  const name = `provider ${report.name}`;
  const isDefault = report.code === defaultProvider;
  const role = isDefault ? " (the default provider)" : "";
  if (report.available) return pass(name, `${report.version ?? "available"}${report.executablePath ? ` at ${report.executablePath}` : ""}${role}`);
  const reason = report.error ?? "not available";
  if (!isDefault) return pass(name, `not used: ${reason}`);
  return fail(
    name,
    `${reason}${role}`,
    `${PROVIDER_INSTALL_REMEDIES[report.code]} Or choose another default: \`pedelec config set defaultProvider <code>\``,
  );
}

const DENO_VERSION_TIMEOUT_MS = 15_000;

/** The pinned Deno is there and runs. */
export async function denoCheck(): Promise<DoctorCheck> {
  const name = "pinned Deno";
  let binary: string;
  try {
    binary = await locateDeno();
  } catch (error) {
    return fail(
      name,
      PedelecError.from(error, "DENO_UNAVAILABLE").message,
      "run `npm ci` in the Pedelec folder so the pinned `deno` package and its binary are installed",
    );
  }
  const ran = await new Promise<{ ok: boolean; text: string }>((resolve) => {
    execFile(binary, ["--version"], { timeout: DENO_VERSION_TIMEOUT_MS }, (error, stdout, stderr) => {
      resolve(error === null ? { ok: true, text: stdout.split("\n")[0]!.trim() } : { ok: false, text: `${error.message} ${stderr}`.trim() });
    });
  });
  return ran.ok
    ? pass(name, `${ran.text} at ${binary}`)
    : fail(name, `${binary} --version failed: ${ran.text}`, "run `npm ci` in the Pedelec folder to reinstall it");
}

/** Sandboxed scripts need bubblewrap on Linux. */
export async function bubblewrapCheck(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const name = "bubblewrap";
  const wall = await probeSandboxWall(env, "linux");
  if (wall.kind === "bubblewrap") return pass(name, `${wall.executable} can build the sandbox`);
  return fail(name, wall.reason, "`sudo apt-get install -y bubblewrap` (Debian, Ubuntu); sandboxed scripts are refused until it works");
}
