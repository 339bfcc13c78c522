import type { CorePaths } from "@pedelec/core/core-paths";
import { recordProviderPaths } from "@pedelec/core/provider-path-recorder";
import { createProviderRegistry } from "@pedelec/core/providers/provider-registry";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { BROWSER_LAYOUTS, browsersOn, findBrowsers, isBrowserId, type BrowserLayout, type MachineView } from "./browser-layouts.js";
import { parseCommandLine, UsageError } from "./command-line.js";
import { applySteps, machineStepRunner, PosixHostRegistrar, type HostRegistrar, type StepRunner } from "./host-registration.js";
import { LAUNCHED_PROGRAMS, posixLauncherScript } from "./launchers.js";
import { EXTENSION_ID_PATTERN } from "./native-host-manifest.js";
import { localAppDataOf, WindowsHostRegistrar } from "./windows-registration.js";

export const INSTALL_USAGE = `Usage: pedelec install [--browser <id>]... [--user-data-dir DIR] [--extension-id ID]... [--json]
       pedelec uninstall [--browser <id>]... [--user-data-dir DIR] [--json]

Registers Pedelec's native messaging host with every Chromium-family browser found on this machine (a browser counts as
found when its profile folder exists or it is installed), or with each browser named by --browser even if it was not
found. uninstall removes the registration the same way, and also wherever one is left behind.

  --browser <id>        ${Object.keys(BROWSER_LAYOUTS).join(", ")}
                        (chrome-canary on macOS only; on Windows every channel shares its vendor's registration)
  --user-data-dir DIR   register for the browser profile in DIR only (a browser started with --user-data-dir=DIR)
  --extension-id ID     allow another build of the extension as well as the default one (repeatable)
  --json                print the result as JSON (progress goes to stderr)`;

/** Where the command reports: progress lines, and the final result. */
export interface InstallIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

/** One browser's registration in the result. */
export interface BrowserRegistration {
  id: string;
  name: string;
  manifestFile: string;
  registryKey: string | null;
  /** Why the browser counts as found; null when it was named or only had a registration left behind. */
  foundBecause: string | null;
  ok: boolean;
  /** install: null; uninstall: whether there was a manifest to remove. */
  removed: boolean | null;
  error: string | null;
}

export interface InstallResult {
  ok: boolean;
  action: "install" | "uninstall";
  home: string;
  hostLauncher: string;
  browsers: BrowserRegistration[];
  providers: { provider: string; path: string }[];
  /** Why install registered nothing (no browser found); null otherwise. */
  error: string | null;
}

export interface InstallContext {
  machine: MachineView;
  paths: CorePaths;
  /** Carries out the file and registry steps; the real machine unless a test records them. */
  runner?: StepRunner;
}

/** `pedelec install` / `pedelec uninstall`; returns the exit code. */
export async function runInstallCommand(
  action: "install" | "uninstall",
  argv: readonly string[],
  io: InstallIo,
  context: InstallContext,
): Promise<number> {
  const { values } = parseCommandLine(argv, {
    browser: { type: "string", multiple: true },
    "user-data-dir": { type: "string" },
    "extension-id": { type: "string", multiple: true },
    json: { type: "boolean" },
  });
  if (values.help) {
    io.out(INSTALL_USAGE);
    return 0;
  }
  const { machine, paths } = context;
  const available = browsersOn(machine.platform);
  const named: BrowserLayout[] = [];
  for (const id of values.browser ?? []) {
    if (!isBrowserId(id))
      throw new UsageError(`unknown browser ${JSON.stringify(id)}; --browser takes one of ${Object.keys(BROWSER_LAYOUTS).join(", ")}`);
    const layout = BROWSER_LAYOUTS[id];
    if (!available.includes(layout))
      throw new UsageError(
        `${layout.name} has no ${machine.platform} build; on this platform --browser takes ${available.map((each) => each.id).join(", ")}`,
      );
    if (!named.includes(layout)) named.push(layout);
  }
  const userDataDir = values["user-data-dir"];
  if (userDataDir !== undefined && machine.platform === "win32")
    throw new UsageError("--user-data-dir is for Linux and macOS; Windows browsers read the registry");
  if (userDataDir !== undefined && named.length > 1)
    throw new UsageError("--user-data-dir names one profile folder: give at most one --browser with it");
  const extensionIds = [DEFAULT_EXTENSION_ID, ...(values["extension-id"] ?? [])];
  for (const id of extensionIds) if (!EXTENSION_ID_PATTERN.test(id)) throw new UsageError(`not a Chrome extension id: ${id} (32 letters a to p)`);

  const json = values.json === true;
  const progress = json ? io.err : io.out;
  const runner = context.runner ?? machineStepRunner;
  const registrar = registrarFor(machine, paths, userDataDir);
  const result: InstallResult = {
    ok: true,
    action,
    home: paths.home,
    hostLauncher: registrar.hostLauncher,
    browsers: [],
    providers: [],
    error: null,
  };
  const finish = (exitCode: number): number => {
    if (json) io.out(JSON.stringify(result, null, 2));
    return exitCode;
  };

  // Which browsers: the one profile, the named ones, or every one found (and, to uninstall, every one registered).
  let targets: { layout: BrowserLayout; foundBecause: string | null }[];
  if (userDataDir !== undefined || named.length > 0) {
    targets = (named.length > 0 ? named : [BROWSER_LAYOUTS.chromium]).map((layout) => ({ layout, foundBecause: null }));
  } else {
    progress(`Looking for Chromium-family browsers (${available.map((layout) => layout.name).join(", ")})…`);
    targets = (await findBrowsers(machine)).map(({ layout, evidence }) => ({ layout, foundBecause: evidence }));
    if (action === "uninstall") {
      for (const layout of available) {
        if (targets.some((target) => target.layout === layout)) continue;
        if (await registrationLeft(registrar, layout, runner)) targets.push({ layout, foundBecause: null });
      }
    }
    for (const { layout, foundBecause } of targets) if (foundBecause !== null) progress(`Found ${layout.name}: ${foundBecause}.`);
  }
  if (targets.length === 0) {
    if (action === "uninstall") {
      progress("No Pedelec registration was found in any browser; nothing to remove.");
      return finish(0);
    }
    result.ok = false;
    result.error =
      "No Chromium-family browser was found. Install Google Chrome, Chromium, Microsoft Edge or Brave and run `pedelec install` " +
      `again, or name the browser: \`pedelec install --browser chrome\` (any of ${available.map((layout) => layout.id).join(", ")}).`;
    io.err(result.error);
    return finish(1);
  }

  if (action === "install") {
    progress(`Writing the launchers (the native host and the agents' commands) for PEDELEC_HOME=${paths.home}…`);
    if (machine.platform !== "win32") {
      await applySteps(
        [
          { kind: "make-folder", path: paths.home, mode: 0o700 },
          { kind: "make-folder", path: paths.binDir, mode: 0o700 },
        ],
        runner,
      );
    }
    const entries = Object.fromEntries(Object.entries(LAUNCHED_PROGRAMS).map(([program, entry]) => [program, entry()]));
    await applySteps(registrar.launcherSteps(entries), runner);
  }

  for (const { layout, foundBecause } of targets) {
    const target = registrar.target(layout);
    const entry: BrowserRegistration = {
      id: layout.id,
      name: layout.name,
      manifestFile: target.manifestFile,
      registryKey: target.registryKey ?? null,
      foundBecause,
      ok: true,
      removed: null,
      error: null,
    };
    progress(`${action === "install" ? "Registering with" : "Removing the registration from"} ${layout.name}…`);
    const outcomes = await applySteps(
      action === "install" ? registrar.registerSteps(layout, extensionIds) : registrar.unregisterSteps(layout),
      runner,
    );
    const failures = outcomes.flatMap((outcome) => (outcome.failure === undefined ? [] : [outcome.failure]));
    // Deleting a registry key that is not there fails; that is not a failure to uninstall.
    const removedFile = outcomes.find((outcome) => outcome.step.kind === "remove-file");
    if (action === "uninstall") entry.removed = removedFile?.existed ?? false;
    if (failures.length > 0 && !(action === "uninstall" && entry.removed === false)) {
      entry.ok = false;
      entry.error = failures.join("; ");
      result.ok = false;
    }
    result.browsers.push(entry);
    if (!json) {
      const where = entry.registryKey === null ? target.manifestFile : `${entry.registryKey} → ${target.manifestFile}`;
      if (!entry.ok) io.err(`Could not ${action === "install" ? "register with" : "unregister from"} ${layout.name}: ${entry.error}`);
      else if (action === "install") io.out(`Registered the Pedelec native host for ${layout.name}: ${where}`);
      else io.out(entry.removed ? `Removed ${where}` : `Nothing to remove at ${where}`);
    }
  }

  if (action === "install") {
    if (!json) io.out(`Host executable: ${registrar.hostLauncher} (PEDELEC_HOME=${paths.home})`);
    // The executables found here mean nothing for another platform's layout (tests lay out every platform on one).
    const recorded = machine.platform === process.platform ? await recordProviders(paths, io.env, progress) : [];
    result.providers = recorded.map(({ provider, path }) => ({ provider, path }));
    if (!json) {
      for (const { provider, path } of recorded) io.out(`Provider ${provider}: ${path} (recorded in ${paths.settingsFile})`);
      if (recorded.length === 0) io.out("No agent CLI found yet; `pedelec doctor` says which ones can be installed and how.");
      io.out(
        "Next: load the extension in the browser (chrome://extensions → Developer mode → Load unpacked), then `pedelec doctor` checks every layer.",
      );
    }
  }
  return finish(result.ok ? 0 : 1);
}

/** The registrar of this platform: files under the browsers' folders, or the registry on Windows. */
export function registrarFor(machine: MachineView, paths: CorePaths, userDataDir?: string): HostRegistrar {
  if (machine.platform === "win32") {
    return new WindowsHostRegistrar({ localAppData: localAppDataOf(machine.env, machine.home), home: paths.home, node: process.execPath });
  }
  return new PosixHostRegistrar({
    machine,
    binDir: paths.binDir,
    launcher: (entry) => posixLauncherScript(paths.home, process.execPath, entry),
    ...(userDataDir !== undefined ? { userDataDir } : {}),
  });
}

function recordProviders(paths: CorePaths, env: NodeJS.ProcessEnv, progress: (line: string) => void) {
  progress("Recording where each agent CLI is installed, for a Core the browser starts with its own environment…");
  return recordProviderPaths(paths.settingsFile, createProviderRegistry(), env);
}

/** Whether a browser not found still holds a manifest of ours (left from when it was installed). */
function registrationLeft(registrar: HostRegistrar, layout: BrowserLayout, runner: StepRunner): Promise<boolean> {
  return runner.exists(registrar.target(layout).manifestFile);
}
