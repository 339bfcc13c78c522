import { fileURLToPath } from "node:url";
import type { CorePaths } from "@pedelec/core/core-paths";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { BROWSER_LAYOUTS, browsersOn, findBrowsers, isBrowserId, type BrowserLayout, type MachineView } from "./browser-layouts.js";
import { parseCommandLine, UsageError } from "./command-line.js";
import {
  assetServerCheck,
  attestationKeyCheck,
  browsersCheck,
  bubblewrapCheck,
  coreCheck,
  denoCheck,
  extensionIdCheck,
  hostRegistrationCheck,
  nodeVersionCheck,
  permissionChecks,
  providerChecks,
  settingsCheck,
  type DoctorCheck,
} from "./doctor-checks.js";
import { registrarFor } from "./install-command.js";

export const DOCTOR_USAGE = `Usage: pedelec doctor [--json] [--browser <id>]... [--user-data-dir DIR]

Checks every layer a request from a web page travels, in order, and prints one line each: a tick, or what is wrong
and how to fix it. Starts Core if it is not running, as the native host would. Exits 1 when any check fails.

  --browser <id>        check these browsers instead of every one found
  --user-data-dir DIR   check the registration in this browser profile (as \`pedelec install --user-data-dir DIR\`)
  --json                print { "ok", "checks": [{ "name", "ok", "detail", "fix" }] }`;

/** The built extension's manifest, beside this package in the repository. */
const EXTENSION_MANIFEST = fileURLToPath(new URL("../../extension/dist/manifest.json", import.meta.url));

export interface DoctorIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

export interface DoctorContext {
  machine: MachineView;
  paths: CorePaths;
  /** Starts Core in the background the way the native host does; resolves its pid. */
  launchCore: () => Promise<number>;
  coreStartTimeoutMs?: number;
}

/** `pedelec doctor`; returns the exit code. */
export async function runDoctorCommand(argv: readonly string[], io: DoctorIo, context: DoctorContext): Promise<number> {
  const { values } = parseCommandLine(argv, {
    json: { type: "boolean" },
    browser: { type: "string", multiple: true },
    "user-data-dir": { type: "string" },
  });
  if (values.help) {
    io.out(DOCTOR_USAGE);
    return 0;
  }
  const named: BrowserLayout[] = [];
  for (const id of values.browser ?? []) {
    if (!isBrowserId(id) || !browsersOn(context.machine.platform).includes(BROWSER_LAYOUTS[id])) {
      throw new UsageError(
        `unknown browser ${JSON.stringify(id)} on ${context.machine.platform}; one of ${browsersOn(context.machine.platform)
          .map((layout) => layout.id)
          .join(", ")}`,
      );
    }
    named.push(BROWSER_LAYOUTS[id]);
  }
  const json = values.json === true;
  const checks: DoctorCheck[] = [];
  const report = (check: DoctorCheck): void => {
    checks.push(check);
    if (json) return;
    io.out(`${check.ok ? "✓" : "✗"} ${check.name}: ${check.detail}`);
    if (!check.ok) io.out(`    fix: ${(check.fix ?? "").replaceAll("\n", "\n         ")}`);
  };
  // Progress goes where it does not spoil the JSON.
  const progress = json ? io.err : (line: string) => io.out(`  … ${line}`);
  await runChecks(values["user-data-dir"], named, context, report, progress, io.env);

  const failed = checks.filter((check) => !check.ok);
  if (json) io.out(JSON.stringify({ ok: failed.length === 0, checks }, null, 2));
  else
    io.out(
      failed.length === 0
        ? `\nAll ${checks.length} checks passed.`
        : `\n${failed.length} of ${checks.length} checks failed; the first fix above is the one to try first.`,
    );
  return failed.length === 0 ? 0 : 1;
}

/** Every layer in the order a page's request reaches it: browser, native host, extension, Core, assets, agent, scripts. */
async function runChecks(
  userDataDir: string | undefined,
  named: BrowserLayout[],
  context: DoctorContext,
  report: (check: DoctorCheck) => void,
  progress: (line: string) => void,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const { machine, paths } = context;
  report(nodeVersionCheck(process.version));

  const registrar = registrarFor(machine, paths, userDataDir);
  let browsers: BrowserLayout[];
  if (userDataDir !== undefined) {
    browsers = [named[0] ?? BROWSER_LAYOUTS.chromium];
    report({ name: "Chromium-family browser", ok: true, detail: `the profile in ${userDataDir} (given with --user-data-dir)`, fix: null });
  } else if (named.length > 0) {
    browsers = named;
    report({
      name: "Chromium-family browser",
      ok: true,
      detail: `checking ${named.map((layout) => layout.name).join(", ")} (given with --browser)`,
      fix: null,
    });
  } else {
    progress("Looking for Chromium-family browsers…");
    browsers = (await findBrowsers(machine)).map((found) => found.layout);
    report(browsersCheck(browsers, machine.platform));
  }
  for (const layout of browsers) {
    const hint = `pedelec install --browser ${layout.id}${userDataDir !== undefined ? ` --user-data-dir '${userDataDir}'` : ""}`;
    report(await hostRegistrationCheck(layout, registrar, DEFAULT_EXTENSION_ID, hint));
  }
  report(await extensionIdCheck(EXTENSION_MANIFEST, DEFAULT_EXTENSION_ID));

  const core = await coreCheck({
    paths,
    launchCore: context.launchCore,
    timeoutMs: context.coreStartTimeoutMs ?? 15_000,
    progress,
  });
  report(core.check);
  if (machine.platform !== "win32") for (const check of await permissionChecks(paths, core.ping !== null)) report(check);
  if (core.ping !== null) report(await assetServerCheck(paths.socketPath, core.ping));
  report(await attestationKeyCheck(paths, core.ping !== null));

  const settings = await settingsCheck(paths);
  report(settings.check);
  progress("Looking for agent CLIs (this may ask your login shell for its PATH)…");
  for (const check of await providerChecks(settings.settings, env)) report(check);
  progress("Running the pinned Deno…");
  report(await denoCheck());
  if (machine.platform === "linux") {
    progress("Trying bubblewrap…");
    report(await bubblewrapCheck(env));
  }
}
