import { homedir } from "node:os";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { waitForCore } from "@pedelec/core-client/core-launch";
import { launchCoreDetached } from "@pedelec/core/core-launcher";
import { runCoreForeground } from "@pedelec/core/core-main";
import { resolveCorePaths } from "@pedelec/core/core-paths";
import { isProcessRunning } from "@pedelec/core/process-stat";
import { ProviderLocator } from "@pedelec/core/provider-locator";
import { LoginShellPath } from "@pedelec/core/providers/login-shell-path";
import { reportProviders } from "@pedelec/core/provider-status";
import { loadSettings } from "@pedelec/core/settings";
import { CONFIG_KEYS, readConfig, SECRET_CONFIG_KEYS, setConfig } from "@pedelec/core/settings-keys";
import { createProviderRegistry } from "@pedelec/core/providers/provider-registry";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { MachineView } from "./browser-layouts.js";
import type { CommandIo } from "./command-io.js";
import { parseCommandLine, PEDELEC_VERSION, UsageError } from "./command-line.js";
import { readConfigValue } from "./config-value-input.js";
import { DOCTOR_USAGE, runDoctorCommand } from "./doctor-command.js";
import { INSTALL_USAGE, runInstallCommand } from "./install-command.js";
import { writeLaunchers } from "./launchers.js";
import { OPEN_USAGE, runOpenCommand } from "./open-command.js";

/** How long `pedelec stop` waits for Core's process to end after asking it to shut down. */
const CORE_STOP_TIMEOUT_MS = 15_000;

const USAGE = `Usage: pedelec <command> [options]

Commands:
  start [--detach]     Run the Pedelec desktop runtime (Core) in the foreground, or in the background with --detach
  stop                 Stop the running Core
  status [--json]      Show whether Core is running (exit 1 when it is not)
  install [--browser <id>]... [--user-data-dir DIR] [--extension-id ID]... [--json]
                       Register the native messaging host with every Chromium-family browser found (or those named)
  uninstall [--browser <id>]... [--user-data-dir DIR] [--json]
                       Remove that registration
  doctor [--json]      Check every layer from the browser to the agent, with a fix for each problem
  open [--print] [--json]
                       Open the control panel in the browser (starts Core if needed); --print only prints its address
  providers [--json]   Show which agent CLIs this machine can run, and why the others cannot
  config get [key] [--json]
                       Show settings (all of them, or one key)
  config set <key> <value | ->
                       Change a setting, checked as Core checks it; a running Core uses it for the next session.
                       Keys: see \`pedelec config --help\`; an empty value resets a key to its default; - reads the
                       value from stdin (use it for ollama.apiKey, so the key is not on the command line)

Every command takes --help and --version. \`pedelec <command> --help\` explains one command.
Environment: PEDELEC_HOME (default ~/.pedelec) holds everything Core owns.`;

const COMMAND_USAGE: Readonly<Record<string, string>> = {
  start: `Usage: pedelec start [--detach]

Runs Core, Pedelec's desktop runtime, in this terminal until Ctrl+C; with --detach, in the background (its log goes
to PEDELEC_HOME/logs/core.log). The browser's native host starts Core by itself when a page needs it.`,
  stop: "Usage: pedelec stop\n\nAsks the running Core to stop, ending its sessions and their agent processes, and waits until it has.",
  status: `Usage: pedelec status [--json]

Says whether Core is running for this PEDELEC_HOME: pid, version, active sessions, home and socket. Exit 1 when it is
not running. --json prints { "running", "pid", "version", "sessions", "home", "socket" }.`,
  install: INSTALL_USAGE,
  uninstall: INSTALL_USAGE,
  doctor: DOCTOR_USAGE,
  open: OPEN_USAGE,
  providers: `Usage: pedelec providers [--json]

Lists every agent CLI Pedelec can drive: whether this machine can run it, its version, and why not.`,
  config: `Usage: pedelec config get [key] [--json]
       pedelec config set <key> <value>
       pedelec config set <key> -

Keys: defaultProvider, defaultEffortLevel, defaultModels.<provider>, effortProfiles.<provider>.<low|medium|high>
(a JSON array of argv tokens), providers.<provider>.path, ollama.baseUrl, ollama.apiKey, sessionRetentionDays,
modelResponseTimeoutSeconds, limits.liveSessionsPerOrigin, limits.assetBytesPerSession, limits.assetBytesPerOrigin,
limits.minFreeDiskBytes (bytes; 512MiB and 2GiB are understood too), logging.debug. An empty value resets a key to
its default.

A value of - is read from stdin: piped (one final line ending is dropped), or typed after a prompt, hidden for
secrets. Set ollama.apiKey that way, e.g. \`pedelec config set ollama.apiKey - < key.txt\`, or in the control panel
(\`pedelec open\`, Providers): a value on the command line is visible to every local user in \`ps\`, and npx writes
its command line to ~/.npm/_logs.`,
};

/** Runs one `pedelec` command; returns the process exit code (2 for a command line that cannot be run). */
export async function runPedelecCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = argv;
  const paths = resolveCorePaths(io.env, io.platform ?? process.platform);
  try {
    switch (command) {
      case "start": {
        const { values } = parseCommandLine(rest, { detach: { type: "boolean", default: false } });
        if (values.help || values.version) return helpOrVersion(command, values.help === true, io);
        await writeLaunchers(paths);
        if (!values.detach) return await runCoreForeground(io.env);
        if (await waitForCore(paths, 0)) {
          io.out(`Pedelec Core is already running (PEDELEC_HOME=${paths.home}).`);
          return 0;
        }
        io.out(`Starting Pedelec Core in the background (PEDELEC_HOME=${paths.home})…`);
        const pid = await launchCoreDetached(paths, io.env);
        // Another `pedelec start` (or the native host) may have won the race: its Core answers, ours exited at once
        // ("already running"). Report the Core that answers, by the pid it gives.
        const running = (await waitForCore(paths, 15_000)) ? await pingCore(paths.socketPath) : undefined;
        if (running === undefined) {
          io.err(`Pedelec Core did not come up; see ${paths.logsDir}/core.log`);
          return 1;
        }
        if (running.pid !== pid) {
          io.out(
            `Pedelec Core is already running (pid ${running.pid}, started meanwhile by another \`pedelec start\` or the browser; PEDELEC_HOME=${paths.home}).`,
          );
          return 0;
        }
        io.out(`Pedelec Core started in the background (pid ${pid}, socket ${paths.socketPath}).`);
        return 0;
      }
      case "stop": {
        const { values } = parseCommandLine(rest, {});
        if (values.help || values.version) return helpOrVersion(command, values.help === true, io);
        const connection = await CoreConnection.open(paths.socketPath).catch(() => undefined);
        if (!connection) {
          io.out("Pedelec Core is not running.");
          return 0;
        }
        const { pid } = await connection.request("ping", {});
        await connection.request("shutdown", {}).finally(() => connection.close());
        // Stopped means the process is gone, not only its socket: Core closes its store and log after it stops listening.
        const deadline = Date.now() + CORE_STOP_TIMEOUT_MS;
        while (isProcessRunning(pid)) {
          if (Date.now() > deadline) {
            io.err(`Pedelec Core (pid ${pid}) did not stop within ${CORE_STOP_TIMEOUT_MS / 1000} s; see ${paths.logsDir}/core.log`);
            return 1;
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        io.out("Pedelec Core stopped.");
        return 0;
      }
      case "status": {
        const { values } = parseCommandLine(rest, { json: { type: "boolean" } });
        if (values.help || values.version) return helpOrVersion(command, values.help === true, io);
        const connection = await CoreConnection.open(paths.socketPath).catch(() => undefined);
        const status = connection ? await connection.request("ping", {}).finally(() => connection.close()) : undefined;
        if (values.json) {
          io.out(
            JSON.stringify(
              {
                running: status !== undefined,
                pid: status?.pid ?? null,
                version: status?.version ?? null,
                sessions: status?.sessions ?? null,
                home: status?.home ?? paths.home,
                socket: paths.socketPath,
              },
              null,
              2,
            ),
          );
        } else if (status === undefined) {
          io.out(`Pedelec Core is not running (PEDELEC_HOME=${paths.home}).`);
        } else {
          io.out(
            `Pedelec Core ${status.version} is running: pid ${status.pid}, ${status.sessions} active session(s), since ${status.startedAt}, PEDELEC_HOME=${status.home}.`,
          );
        }
        return status === undefined ? 1 : 0;
      }
      case "install":
      case "uninstall": {
        if (rest.includes("--version")) return helpOrVersion(command, false, io);
        return await runInstallCommand(command, rest, io, { machine: machineOf(io), paths, ...(io.stepRunner ? { runner: io.stepRunner } : {}) });
      }
      case "doctor": {
        if (rest.includes("--version")) return helpOrVersion(command, false, io);
        return await runDoctorCommand(rest, io, {
          machine: machineOf(io),
          paths,
          launchCore: io.launchCore ?? (() => launchCoreDetached(paths, io.env)),
        });
      }
      case "open":
        return await runOpenCommand(rest, io);
      case "providers": {
        const { values } = parseCommandLine(rest, { json: { type: "boolean", default: false } });
        if (values.help || values.version) return helpOrVersion(command, values.help === true, io);
        const registry = createProviderRegistry();
        const reports = await reportProviders(
          registry,
          new ProviderLocator(registry, io.env, new LoginShellPath(io.env)),
          await loadSettings(paths.settingsFile),
        );
        if (values.json) {
          io.out(
            JSON.stringify(
              reports.map(({ code, name, available, version, error }) => ({ code, name, available, version, error })),
              null,
              2,
            ),
          );
        } else {
          io.out(
            formatTable(
              ["code", "name", "available", "version", "error"],
              reports.map((report) => [report.code, report.name, report.available ? "yes" : "no", report.version ?? "", report.error ?? ""]),
            ),
          );
        }
        return 0;
      }
      case "config": {
        const [action, ...operands] = rest;
        const { values, positionals } = parseCommandLine(
          action === undefined || action.startsWith("-") ? rest : operands,
          { json: { type: "boolean", default: false } },
          true,
        );
        if (values.help || values.version) return helpOrVersion(command, values.help === true, io);
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
          const key = positionals[0]!;
          const secret = SECRET_CONFIG_KEYS.includes(key);
          let value = positionals[1]!;
          if (value === "-") {
            // Refuse an unknown key before waiting for input that would only be thrown away.
            if (!CONFIG_KEYS.includes(key))
              throw new PedelecError("INVALID_INPUT", `unknown key ${JSON.stringify(key)}; see \`pedelec config --help\``);
            value = await readConfigValue(io.stdin ?? process.stdin, key, secret, (text) => process.stderr.write(text));
          } else if (secret && value !== "") {
            io.err(
              `pedelec config: ${key} was given on the command line, where \`ps\` shows it to every local user (and npx logs it); next time use \`pedelec config set ${key} -\` and type or pipe it in, or the control panel`,
            );
          }
          await setConfig(paths.settingsFile, registry, key, value);
          if (values.json) io.out(JSON.stringify({ ok: true }));
          else io.out(`Set ${key} in ${paths.settingsFile}.`);
          return 0;
        }
        io.err(COMMAND_USAGE.config!);
        return 2;
      }
      case "--version":
      case "-v":
      case "version":
        io.out(`pedelec ${PEDELEC_VERSION}`);
        return 0;
      case undefined:
      case "help":
      case "--help":
      case "-h": {
        const topic = rest[0];
        if (command === "help" && topic !== undefined && Object.hasOwn(COMMAND_USAGE, topic)) return helpOrVersion(topic, true, io);
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      }
      default:
        io.err(`Unknown command: ${command}\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`pedelec ${command}: ${error.message}\n\n${COMMAND_USAGE[command!] ?? USAGE}`);
      return 2;
    }
    const coded = PedelecError.from(error, "INVALID_INPUT");
    io.err(`pedelec ${command}: ${coded.message} [${coded.code}]`);
    io.err(`  ${coded.remedy}`);
    return 1;
  }
}

/** The running Core's answer to ping, or undefined when none answers. */
async function pingCore(socketPath: string): Promise<{ pid: number } | undefined> {
  const connection = await CoreConnection.open(socketPath).catch(() => undefined);
  if (connection === undefined) return undefined;
  return connection
    .request("ping", {})
    .catch(() => undefined)
    .finally(() => connection.close());
}

function helpOrVersion(command: string, help: boolean, io: CommandIo): number {
  io.out(help ? COMMAND_USAGE[command]! : `pedelec ${command} ${PEDELEC_VERSION}`);
  return 0;
}

function machineOf(io: CommandIo): MachineView {
  const platform = io.platform ?? (process.platform === "darwin" || process.platform === "win32" ? process.platform : "linux");
  return { platform, home: io.home ?? homedir(), env: io.env, ...(io.systemRoot !== undefined ? { systemRoot: io.systemRoot } : {}) };
}

/** Plain columns, padded to the widest cell. */
function formatTable(headings: string[], rows: string[][]): string {
  const widths = headings.map((heading, column) => Math.max(heading.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  return [line(headings), ...rows.map(line)].join("\n");
}
