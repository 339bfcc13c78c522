import { win32 } from "node:path";
import { NATIVE_HOST_NAME } from "@pedelec/protocol/native-wire";
import type { BrowserLayout } from "./browser-layouts.js";
import type { HostRegistrar, HostRegistrationTarget, RegistrationStep } from "./host-registration.js";
import { windowsLauncherScript } from "./launchers.js";
import { nativeHostManifest } from "./native-host-manifest.js";

/**
 * Windows: Chromium browsers find a per-user host through `HKCU\<vendor key>\NativeMessagingHosts\<host name>`, whose
 * default value is the manifest's full path; the manifest may sit anywhere. Pedelec keeps its files under
 * `%LOCALAPPDATA%\Pedelec`: `bin\<program>.cmd` launchers (Chrome starts a host through cmd.exe, so a `.cmd` is a
 * valid `path`) and one manifest per vendor in `NativeMessagingHosts\<browser>\`, so that uninstalling one vendor
 * leaves the others working. Every step goes through the runner as `reg add` / `reg delete` argument lists.
 */
export class WindowsHostRegistrar implements HostRegistrar {
  readonly platform = "win32" as const;
  readonly hostLauncher: string;
  readonly #root: string;
  readonly #home: string;
  readonly #node: string;

  constructor(options: {
    /** %LOCALAPPDATA% (C:\Users\<user>\AppData\Local). */
    localAppData: string;
    /** PEDELEC_HOME, pinned into every launcher. */
    home: string;
    /** node.exe that runs the programs. */
    node: string;
  }) {
    this.#root = win32.join(options.localAppData, "Pedelec");
    this.#home = options.home;
    this.#node = options.node;
    this.hostLauncher = win32.join(this.#root, "bin", "pedelec-native-host.cmd");
  }

  launcherSteps(entries: Readonly<Record<string, string>>): RegistrationStep[] {
    return Object.entries(entries).map(([program, entry]) => ({
      kind: "write-file",
      path: win32.join(this.#root, "bin", `${program}.cmd`),
      content: windowsLauncherScript(this.#home, this.#node, entry),
      mode: 0o644,
    }));
  }

  target(layout: BrowserLayout): HostRegistrationTarget {
    return {
      manifestFile: win32.join(this.#root, "NativeMessagingHosts", layout.id, `${NATIVE_HOST_NAME}.json`),
      registryKey: `HKCU\\${layout.windowsRegistryPath}\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`,
    };
  }

  registerSteps(layout: BrowserLayout, extensionIds: readonly string[]): RegistrationStep[] {
    const { manifestFile, registryKey } = this.target(layout);
    const manifest = nativeHostManifest(this.hostLauncher, extensionIds);
    return [
      { kind: "write-file", path: manifestFile, content: `${JSON.stringify(manifest, null, 2)}\r\n`, mode: 0o644 },
      // /ve: the key's default value; /f: replace an earlier registration without asking.
      { kind: "run", command: "reg", args: ["add", registryKey!, "/ve", "/t", "REG_SZ", "/d", manifestFile, "/f"] },
    ];
  }

  unregisterSteps(layout: BrowserLayout): RegistrationStep[] {
    const { manifestFile, registryKey } = this.target(layout);
    return [
      { kind: "run", command: "reg", args: ["delete", registryKey!, "/f"] },
      { kind: "remove-file", path: manifestFile },
    ];
  }
}

/** %LOCALAPPDATA%, or its usual place under the user's profile when the variable is missing. */
export function localAppDataOf(env: NodeJS.ProcessEnv, home: string): string {
  const configured = env.LOCALAPPDATA;
  return configured !== undefined && win32.isAbsolute(configured) ? configured : win32.join(home, "AppData", "Local");
}
