import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, posix, win32 } from "node:path";

/** The platforms Pedelec registers its native host on. */
export type HostPlatform = "linux" | "darwin" | "win32";

/** Every Chromium-family browser and channel `pedelec install` knows, by the id `--browser` takes. */
export const BROWSER_IDS = [
  "chrome",
  "chrome-beta",
  "chrome-dev",
  "chrome-canary",
  "chromium",
  "edge",
  "edge-beta",
  "edge-dev",
  "brave",
  "brave-beta",
  "brave-nightly",
] as const;
export type BrowserId = (typeof BROWSER_IDS)[number];

export function isBrowserId(value: string): value is BrowserId {
  return (BROWSER_IDS as readonly string[]).includes(value);
}

/**
 * Where one browser keeps its per-user data on each platform. Chromium reads per-user native host manifests from
 * `<user data dir>/NativeMessagingHosts/` on Linux and macOS, so the folder follows the browser's user data dir; on
 * Windows it reads a registry key instead, one per vendor (every channel of a vendor shares it).
 */
export interface BrowserLayout {
  id: BrowserId;
  /** What the user calls it. */
  name: string;
  /** Under `$XDG_CONFIG_HOME` (default `~/.config`); null when there is no Linux build of this channel. */
  linuxConfigDir: string | null;
  /** Executables of this channel on Linux, looked up on PATH, then in /usr/bin, /opt and /snap. */
  linuxExecutables: readonly string[];
  /** Under `~/Library/Application Support`; null when there is no macOS build of this channel. */
  macSupportDir: string | null;
  /** The app bundle in /Applications or ~/Applications. */
  macApp: string | null;
  /** `HKCU\<this>\NativeMessagingHosts\<host name>` on Windows. */
  windowsRegistryPath: string;
  /** Under %LOCALAPPDATA%: the user data folder of the vendor's stable channel on Windows. */
  windowsUserDataDir: string;
}

const GOOGLE_CHROME_KEY = "Software\\Google\\Chrome";
const EDGE_KEY = "Software\\Microsoft\\Edge";
const BRAVE_KEY = "Software\\BraveSoftware\\Brave-Browser";

export const BROWSER_LAYOUTS: Readonly<Record<BrowserId, BrowserLayout>> = {
  chrome: {
    id: "chrome",
    name: "Google Chrome",
    linuxConfigDir: "google-chrome",
    linuxExecutables: ["google-chrome", "google-chrome-stable", "/opt/google/chrome/chrome"],
    macSupportDir: "Google/Chrome",
    macApp: "Google Chrome.app",
    windowsRegistryPath: GOOGLE_CHROME_KEY,
    windowsUserDataDir: "Google\\Chrome\\User Data",
  },
  "chrome-beta": {
    id: "chrome-beta",
    name: "Google Chrome Beta",
    linuxConfigDir: "google-chrome-beta",
    linuxExecutables: ["google-chrome-beta", "/opt/google/chrome-beta/chrome"],
    macSupportDir: "Google/Chrome Beta",
    macApp: "Google Chrome Beta.app",
    windowsRegistryPath: GOOGLE_CHROME_KEY,
    windowsUserDataDir: "Google\\Chrome\\User Data",
  },
  "chrome-dev": {
    id: "chrome-dev",
    name: "Google Chrome Dev",
    linuxConfigDir: "google-chrome-unstable",
    linuxExecutables: ["google-chrome-unstable", "/opt/google/chrome-unstable/chrome"],
    macSupportDir: "Google/Chrome Dev",
    macApp: "Google Chrome Dev.app",
    windowsRegistryPath: GOOGLE_CHROME_KEY,
    windowsUserDataDir: "Google\\Chrome\\User Data",
  },
  "chrome-canary": {
    id: "chrome-canary",
    name: "Google Chrome Canary",
    linuxConfigDir: null,
    linuxExecutables: [],
    macSupportDir: "Google/Chrome Canary",
    macApp: "Google Chrome Canary.app",
    windowsRegistryPath: GOOGLE_CHROME_KEY,
    windowsUserDataDir: "Google\\Chrome\\User Data",
  },
  chromium: {
    id: "chromium",
    name: "Chromium",
    linuxConfigDir: "chromium",
    linuxExecutables: ["chromium", "chromium-browser", "/snap/bin/chromium"],
    macSupportDir: "Chromium",
    macApp: "Chromium.app",
    windowsRegistryPath: "Software\\Chromium",
    windowsUserDataDir: "Chromium\\User Data",
  },
  edge: {
    id: "edge",
    name: "Microsoft Edge",
    linuxConfigDir: "microsoft-edge",
    linuxExecutables: ["microsoft-edge", "microsoft-edge-stable", "/opt/microsoft/msedge/msedge"],
    macSupportDir: "Microsoft Edge",
    macApp: "Microsoft Edge.app",
    windowsRegistryPath: EDGE_KEY,
    windowsUserDataDir: "Microsoft\\Edge\\User Data",
  },
  "edge-beta": {
    id: "edge-beta",
    name: "Microsoft Edge Beta",
    linuxConfigDir: "microsoft-edge-beta",
    linuxExecutables: ["microsoft-edge-beta", "/opt/microsoft/msedge-beta/msedge"],
    macSupportDir: "Microsoft Edge Beta",
    macApp: "Microsoft Edge Beta.app",
    windowsRegistryPath: EDGE_KEY,
    windowsUserDataDir: "Microsoft\\Edge\\User Data",
  },
  "edge-dev": {
    id: "edge-dev",
    name: "Microsoft Edge Dev",
    linuxConfigDir: "microsoft-edge-dev",
    linuxExecutables: ["microsoft-edge-dev", "/opt/microsoft/msedge-dev/msedge"],
    macSupportDir: "Microsoft Edge Dev",
    macApp: "Microsoft Edge Dev.app",
    windowsRegistryPath: EDGE_KEY,
    windowsUserDataDir: "Microsoft\\Edge\\User Data",
  },
  brave: {
    id: "brave",
    name: "Brave",
    linuxConfigDir: "BraveSoftware/Brave-Browser",
    linuxExecutables: ["brave-browser", "brave-browser-stable", "brave", "/opt/brave.com/brave/brave"],
    macSupportDir: "BraveSoftware/Brave-Browser",
    macApp: "Brave Browser.app",
    windowsRegistryPath: BRAVE_KEY,
    windowsUserDataDir: "BraveSoftware\\Brave-Browser\\User Data",
  },
  "brave-beta": {
    id: "brave-beta",
    name: "Brave Beta",
    linuxConfigDir: "BraveSoftware/Brave-Browser-Beta",
    linuxExecutables: ["brave-browser-beta", "/opt/brave.com/brave-beta/brave"],
    macSupportDir: "BraveSoftware/Brave-Browser-Beta",
    macApp: "Brave Browser Beta.app",
    windowsRegistryPath: BRAVE_KEY,
    windowsUserDataDir: "BraveSoftware\\Brave-Browser\\User Data",
  },
  "brave-nightly": {
    id: "brave-nightly",
    name: "Brave Nightly",
    linuxConfigDir: "BraveSoftware/Brave-Browser-Nightly",
    linuxExecutables: ["brave-browser-nightly", "/opt/brave.com/brave-nightly/brave"],
    macSupportDir: "BraveSoftware/Brave-Browser-Nightly",
    macApp: "Brave Browser Nightly.app",
    windowsRegistryPath: BRAVE_KEY,
    windowsUserDataDir: "BraveSoftware\\Brave-Browser\\User Data",
  },
};

/** What a lookup needs of the machine; tests pass a temporary home and another platform. */
export interface MachineView {
  platform: HostPlatform;
  /** The user's home folder. */
  home: string;
  env: NodeJS.ProcessEnv;
  /** Where system folders (/usr/bin, /opt, /snap, /Applications) are looked up; "/" but in tests. */
  systemRoot?: string;
}

/** On Windows every channel of a vendor reads the vendor's one registry key, so one registration per vendor. */
const WINDOWS_BROWSERS: readonly BrowserId[] = ["chrome", "chromium", "edge", "brave"];

/** The browsers that exist on this platform at all. */
export function browsersOn(platform: HostPlatform): BrowserLayout[] {
  const layouts = BROWSER_IDS.map((id) => BROWSER_LAYOUTS[id]);
  if (platform === "linux") return layouts.filter((layout) => layout.linuxConfigDir !== null);
  if (platform === "darwin") return layouts.filter((layout) => layout.macSupportDir !== null);
  return layouts.filter((layout) => WINDOWS_BROWSERS.includes(layout.id));
}

/**
 * The browser's per-user data folder, or null where that channel does not exist. Linux and macOS paths use `/` and
 * Windows paths `\`, whatever platform computes them (tests lay out every platform on Linux).
 */
export function userDataDir(layout: BrowserLayout, machine: MachineView): string | null {
  if (machine.platform === "darwin") {
    return layout.macSupportDir === null ? null : posix.join(machine.home, "Library", "Application Support", layout.macSupportDir);
  }
  if (machine.platform === "win32") {
    const localAppData = machine.env.LOCALAPPDATA;
    const root = localAppData !== undefined && win32.isAbsolute(localAppData) ? localAppData : win32.join(machine.home, "AppData", "Local");
    return win32.join(root, layout.windowsUserDataDir);
  }
  if (machine.platform === "linux") {
    if (layout.linuxConfigDir === null) return null;
    const configured = machine.env.XDG_CONFIG_HOME;
    const configRoot = configured !== undefined && isAbsolute(configured) ? configured : posix.join(machine.home, ".config");
    return posix.join(configRoot, layout.linuxConfigDir);
  }
  return null;
}

/** Why we think the browser is installed, or null when nothing says it is. */
export async function browserEvidence(layout: BrowserLayout, machine: MachineView): Promise<string | null> {
  const dataDir = userDataDir(layout, machine);
  if (dataDir !== null && (await isDirectory(dataDir))) return `its profile folder ${dataDir} exists`;
  if (machine.platform === "linux") {
    const folders = (machine.env.PATH ?? "").split(delimiter).filter((folder) => isAbsolute(folder));
    for (const executable of layout.linuxExecutables) {
      const candidates = isAbsolute(executable)
        ? [systemPath(machine, executable)]
        : [...folders.map((folder) => posix.join(folder, executable)), systemPath(machine, posix.join("/usr/bin", executable))];
      for (const candidate of candidates) if (await isExecutableFile(candidate)) return `${candidate} is installed`;
    }
  }
  if (machine.platform === "darwin" && layout.macApp !== null) {
    for (const applications of [systemPath(machine, "/Applications"), posix.join(machine.home, "Applications")]) {
      const app = posix.join(applications, layout.macApp);
      if (await isDirectory(app)) return `${app} is installed`;
    }
  }
  return null;
}

export interface FoundBrowser {
  layout: BrowserLayout;
  evidence: string;
}

/** Every browser of this platform that is installed or has a profile folder, in the table's order. */
export async function findBrowsers(machine: MachineView): Promise<FoundBrowser[]> {
  const found: FoundBrowser[] = [];
  for (const layout of browsersOn(machine.platform)) {
    const evidence = await browserEvidence(layout, machine);
    if (evidence !== null) found.push({ layout, evidence });
  }
  return found;
}

function systemPath(machine: MachineView, path: string): string {
  return posix.join(machine.systemRoot ?? "/", path);
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
