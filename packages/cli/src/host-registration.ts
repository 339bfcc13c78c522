import { execFile } from "node:child_process";
import { access, chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, posix } from "node:path";
import { NATIVE_HOST_NAME } from "@pedelec/protocol/native-wire";
import { userDataDir, type BrowserLayout, type HostPlatform, type MachineView } from "./browser-layouts.js";
import { nativeHostManifest } from "./native-host-manifest.js";

/** One thing registering or unregistering does to the machine, as data: printed, tested, then carried out. */
export type RegistrationStep =
  | { kind: "make-folder"; path: string; mode: number }
  | { kind: "write-file"; path: string; content: string; mode: number }
  | { kind: "remove-file"; path: string }
  | { kind: "run"; command: string; args: readonly string[] };

/** Carries out steps; tests pass one that records them instead. */
export interface StepRunner {
  /** Creates the folder and its parents; an existing folder keeps its mode. */
  makeFolder(path: string, mode: number): Promise<void>;
  writeFile(path: string, content: string, mode: number): Promise<void>;
  /** Resolves whether there was a file to remove. */
  removeFile(path: string): Promise<boolean>;
  run(command: string, args: readonly string[]): Promise<{ exitCode: number; output: string }>;
  exists(path: string): Promise<boolean>;
}

/** Where the browser finds our host, as far as the platform tells it. */
export interface HostRegistrationTarget {
  /** The host manifest this browser reads. */
  manifestFile: string;
  /** Windows: the registry key whose default value names the manifest. */
  registryKey?: string;
}

/**
 * The platform seam: what registering Pedelec's native host with one browser means on this operating system. Linux and
 * macOS write a manifest into the browser's user data folder; Windows writes one manifest per vendor under
 * %LOCALAPPDATA%\Pedelec and points the vendor's HKCU registry key at it.
 */
export interface HostRegistrar {
  readonly platform: HostPlatform;
  /** The launcher every manifest names as the host's `path`. */
  readonly hostLauncher: string;
  /** The launchers to write (native host, agent commands), each pinning this installation's home and Node.js. */
  launcherSteps(entries: Readonly<Record<string, string>>): RegistrationStep[];
  target(layout: BrowserLayout): HostRegistrationTarget;
  registerSteps(layout: BrowserLayout, extensionIds: readonly string[]): RegistrationStep[];
  unregisterSteps(layout: BrowserLayout): RegistrationStep[];
}

/** Linux and macOS: `<user data dir>/NativeMessagingHosts/<host>.json`, or under `--user-data-dir` when given. */
export class PosixHostRegistrar implements HostRegistrar {
  readonly platform: HostPlatform;
  readonly hostLauncher: string;
  readonly #machine: MachineView;
  readonly #binDir: string;
  readonly #launcher: (entry: string) => string;
  readonly #explicitUserDataDir: string | undefined;

  constructor(options: {
    machine: MachineView;
    /** PEDELEC_HOME/bin. */
    binDir: string;
    /** The launcher's text for a program entry. */
    launcher: (entry: string) => string;
    /** `--user-data-dir`: one profile folder instead of the browser's own. */
    userDataDir?: string;
  }) {
    this.platform = options.machine.platform;
    this.#machine = options.machine;
    this.#binDir = options.binDir;
    this.#launcher = options.launcher;
    this.#explicitUserDataDir = options.userDataDir;
    this.hostLauncher = posix.join(options.binDir, "pedelec-native-host");
  }

  launcherSteps(entries: Readonly<Record<string, string>>): RegistrationStep[] {
    return Object.entries(entries).map(([program, entry]) => ({
      kind: "write-file",
      path: posix.join(this.#binDir, program),
      content: this.#launcher(entry),
      mode: 0o755,
    }));
  }

  target(layout: BrowserLayout): HostRegistrationTarget {
    const dataDir = this.#explicitUserDataDir ?? userDataDir(layout, this.#machine);
    if (dataDir === null) throw new Error(`${layout.name} does not exist on ${this.platform}`);
    return { manifestFile: posix.join(dataDir, "NativeMessagingHosts", `${NATIVE_HOST_NAME}.json`) };
  }

  registerSteps(layout: BrowserLayout, extensionIds: readonly string[]): RegistrationStep[] {
    const manifest = nativeHostManifest(this.hostLauncher, extensionIds);
    return [{ kind: "write-file", path: this.target(layout).manifestFile, content: `${JSON.stringify(manifest, null, 2)}\n`, mode: 0o644 }];
  }

  unregisterSteps(layout: BrowserLayout): RegistrationStep[] {
    return [{ kind: "remove-file", path: this.target(layout).manifestFile }];
  }
}

/** What carrying out the steps came to: files written and removed, commands that failed. */
export interface StepOutcome {
  step: RegistrationStep;
  /** remove-file: whether the file was there. */
  existed?: boolean;
  /** run: the command's exit code and output when it failed. */
  failure?: string;
}

/** Carries out steps in order; a failing command is reported, not thrown, so the remaining browsers still get theirs. */
export async function applySteps(steps: readonly RegistrationStep[], runner: StepRunner): Promise<StepOutcome[]> {
  const outcomes: StepOutcome[] = [];
  for (const step of steps) {
    if (step.kind === "make-folder") {
      await runner.makeFolder(step.path, step.mode);
      outcomes.push({ step });
    } else if (step.kind === "write-file") {
      await runner.writeFile(step.path, step.content, step.mode);
      outcomes.push({ step });
    } else if (step.kind === "remove-file") {
      outcomes.push({ step, existed: await runner.removeFile(step.path) });
    } else {
      const { exitCode, output } = await runner.run(step.command, step.args);
      outcomes.push(exitCode === 0 ? { step } : { step, failure: `${step.command} exited with ${exitCode}: ${output.trim()}` });
    }
  }
  return outcomes;
}

const COMMAND_TIMEOUT_MS = 30_000;

/** The runner that touches the real machine. */
export const machineStepRunner: StepRunner = {
  async makeFolder(path, mode) {
    await mkdir(path, { recursive: true, mode });
  },
  async writeFile(path, content, mode) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content, { mode });
    // writeFile keeps the mode of a file that was already there.
    await chmod(path, mode);
  },
  async removeFile(path) {
    try {
      await rm(path);
      return true;
    } catch {
      return false;
    }
  },
  async exists(path) {
    try {
      await access(path);
      return true;
    } catch {
      return false;
    }
  },
  run(command, args) {
    return new Promise((resolve) => {
      execFile(command, [...args], { timeout: COMMAND_TIMEOUT_MS, windowsHide: true }, (error, stdout, stderr) => {
        const exitCode = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ exitCode, output: `${stdout}${stderr}${error !== null && typeof error.code !== "number" ? error.message : ""}` });
      });
    });
  },
};
