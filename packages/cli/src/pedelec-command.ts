import { parseArgs } from "node:util";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { waitForCore } from "@pedelec/core-client/core-launch";
import { launchCoreDetached } from "@pedelec/core/core-launcher";
import { runCoreForeground } from "@pedelec/core/core-main";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { ProviderLocator } from "@pedelec/core/provider-locator";
import { LoginShellPath } from "@pedelec/core/providers/login-shell-path";
import { recordProviderPaths } from "@pedelec/core/provider-path-recorder";
import { reportProviders } from "@pedelec/core/provider-status";
import { loadSettings } from "@pedelec/core/settings";
import { createProviderRegistry } from "@pedelec/core/providers/provider-registry";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { readConfig, setConfig } from "./config-command.js";
import { writeLaunchers } from "./launchers.js";
import { nativeHostManifestDir, removeNativeHostManifest, writeNativeHostManifest, type BrowserName } from "./native-host-manifest.js";

const USAGE = `Usage: pedelec <command> [options]

Commands:
  start [--detach]     Run the Pedelec desktop runtime (Core) in the foreground, or in the background with --detach
  stop                 Stop the running Core
  status               Show whether Core is running (exit 1 when it is not)
  install [--browser chrome|chromium] [--user-data-dir DIR] [--extension-id ID]...
                       Register the native messaging host with the browser
  uninstall [--browser chrome|chromium] [--user-data-dir DIR]
                       Remove that registration
  providers [--json]   Show which agent CLIs this machine can run, and why the others cannot
  config get [key] [--json]
                       Show settings (all of them, or one key)
  config set <key> <value>
                       Change a setting, checked as Core checks it; a running Core uses it for the next session.
                       Keys: defaultProvider, defaultEffortLevel, defaultModels.<provider>,
                       effortProfiles.<provider>.<low|medium|high> (a JSON array of argv tokens), providers.<provider>.path

Environment: PEDELEC_HOME (default ~/.pedelec) holds everything Core owns.`;

export interface CommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

/** Runs one `pedelec` command; returns the process exit code. */
export async function runPedelecCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = argv;
  const paths = resolveCorePaths(io.env);
  try {
    switch (command) {
      case "start": {
        const { values } = parseArgs({ args: rest, options: { detach: { type: "boolean", default: false } }, strict: true });
        await writeLaunchers(paths);
        if (!values.detach) return await runCoreForeground(io.env);
        if (await waitForCore(paths, 0)) {
          io.out(`Pedelec Core is already running (PEDELEC_HOME=${paths.home}).`);
          return 0;
        }
        const pid = await launchCoreDetached(paths, io.env);
        if (!(await waitForCore(paths, 15_000))) {
          io.err(`Pedelec Core did not come up; see ${paths.logsDir}/core.log`);
          return 1;
        }
        io.out(`Pedelec Core started in the background (pid ${pid}, socket ${paths.socketPath}).`);
        return 0;
      }
      case "stop": {
        const connection = await CoreConnection.open(paths.socketPath).catch(() => undefined);
        if (!connection) {
          io.out("Pedelec Core is not running.");
          return 0;
        }
        await connection.request("shutdown", {}).finally(() => connection.close());
        const deadline = Date.now() + 15_000;
        while (Date.now() < deadline && (await waitForCore(paths, 0))) await new Promise((resolve) => setTimeout(resolve, 50));
        io.out("Pedelec Core stopped.");
        return 0;
      }
      case "status": {
        const connection = await CoreConnection.open(paths.socketPath).catch(() => undefined);
        if (!connection) {
          io.out(`Pedelec Core is not running (PEDELEC_HOME=${paths.home}).`);
          return 1;
        }
        const status = await connection.request("ping", {}).finally(() => connection.close());
        io.out(`Pedelec Core ${status.version} is running: pid ${status.pid}, ${status.sessions} active session(s), since ${status.startedAt}, PEDELEC_HOME=${status.home}.`);
        return 0;
      }
      case "install":
      case "uninstall": {
        const { values } = parseArgs({
          args: rest,
          options: {
            browser: { type: "string", default: "chromium" },
            "user-data-dir": { type: "string" },
            "extension-id": { type: "string", multiple: true },
          },
          strict: true,
        });
        if (values.browser !== "chrome" && values.browser !== "chromium") {
          io.err(`--browser must be chrome or chromium, not ${values.browser}`);
          return 2;
        }
        const dir = nativeHostManifestDir(values.browser as BrowserName, values["user-data-dir"]);
        if (command === "uninstall") {
          const removed = await removeNativeHostManifest(dir);
          io.out(removed.existed ? `Removed ${removed.file}` : `Nothing to remove at ${removed.file}`);
          return 0;
        }
        const launchers = await writeLaunchers(paths);
        const extensionIds = [DEFAULT_EXTENSION_ID, ...(values["extension-id"] ?? [])];
        for (const id of extensionIds) {
          if (!/^[a-p]{32}$/.test(id)) {
            io.err(`not a Chrome extension id: ${id}`);
            return 2;
          }
        }
        const file = await writeNativeHostManifest({ dir, hostPath: launchers["pedelec-native-host"], extensionIds });
        io.out(`Registered the Pedelec native host for ${values.browser}: ${file}`);
        io.out(`Host executable: ${launchers["pedelec-native-host"]} (PEDELEC_HOME=${paths.home})`);
        const recorded = await recordProviderPaths(paths.settingsFile, createProviderRegistry(), io.env);
        for (const { provider, path } of recorded) io.out(`Provider ${provider}: ${path} (recorded in ${paths.settingsFile})`);
        return 0;
      }
      case "providers": {
        const { values } = parseArgs({ args: rest, options: { json: { type: "boolean", default: false } }, strict: true });
        const registry = createProviderRegistry();
        const reports = await reportProviders(registry, new ProviderLocator(registry, io.env, new LoginShellPath(io.env)), await loadSettings(paths.settingsFile));
        if (values.json) {
          io.out(JSON.stringify(reports.map(({ code, name, available, version, error }) => ({ code, name, available, version, error })), null, 2));
        } else {
          io.out(formatTable(["code", "name", "available", "version", "error"], reports.map((report) => [
            report.code, report.name, report.available ? "yes" : "no", report.version ?? "", report.error ?? "",
          ])));
        }
        return 0;
      }
      case "config": {
        const [action, ...operands] = rest;
        const { values, positionals } = parseArgs({ args: operands, options: { json: { type: "boolean", default: false } }, allowPositionals: true, strict: true });
        const registry = createProviderRegistry();
        if (action === "get" && positionals.length <= 1) {
          const all = await readConfig(paths.settingsFile, registry);
          const key = positionals[0];
          if (key !== undefined && !Object.hasOwn(all, key)) {
            io.err(`unknown key ${JSON.stringify(key)}`);
            return 2;
          }
          const shown = key === undefined ? all : all[key];
          if (values.json) io.out(JSON.stringify(shown, null, 2));
          else if (key !== undefined) io.out(typeof shown === "string" ? shown : JSON.stringify(shown));
          else for (const [name, value] of Object.entries(all)) io.out(`${name} = ${JSON.stringify(value)}`);
          return 0;
        }
        if (action === "set" && positionals.length === 2) {
          await setConfig(paths.settingsFile, registry, positionals[0]!, positionals[1]!);
          if (values.json) io.out(JSON.stringify({ ok: true }));
          else io.out(`Set ${positionals[0]} in ${paths.settingsFile}.`);
          return 0;
        }
        io.err(`Usage: pedelec config get [key] [--json] | pedelec config set <key> <value>`);
        return 2;
      }
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        io.err(`Unknown command: ${command}\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    const coded = PedelecError.from(error, "INVALID_INPUT");
    io.err(`pedelec ${command}: ${coded.message} [${coded.code}]`);
    return 1;
  }
}

/** Plain columns, padded to the widest cell. */
function formatTable(headings: string[], rows: string[][]): string {
  const widths = headings.map((heading, column) => Math.max(heading.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd();
  return [line(headings), ...rows.map(line)].join("\n");
}
