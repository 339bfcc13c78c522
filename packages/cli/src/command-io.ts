import type { HostPlatform } from "./browser-layouts.js";
import type { ValueInput } from "./config-value-input.js";
import type { StepRunner } from "./host-registration.js";

/** What a `pedelec` command reads and writes: its output lines, its environment and the machine it acts on. */
export interface CommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
  /** The user's home folder for browser folders; the real one unless a test gives a temporary one. */
  home?: string;
  /** The platform whose browser layout to use; this one unless a test lays out another. */
  platform?: HostPlatform;
  /** Where /usr/bin, /opt and /Applications are looked up; "/" unless a test gives an empty folder. */
  systemRoot?: string;
  /** Carries out install steps; the real machine unless a test records them. */
  stepRunner?: StepRunner;
  /** How doctor starts Core when it is not running; the native host's way unless a test gives another. */
  launchCore?: () => Promise<number>;
  /** Where `config set <key> -` reads its value; process.stdin unless a test pipes one in. */
  stdin?: ValueInput;
}
