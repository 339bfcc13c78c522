import { mkdir, rm, writeFile } from "node:fs/promises";
import { homedir, platform } from "node:os";
import { join } from "node:path";
import { NATIVE_HOST_NAME } from "@pedelec/protocol/native-wire";

export type BrowserName = "chrome" | "chromium";

/**
 * Where the browser looks for native host manifests. With a user-data-dir the per-profile folder is used (what
 * Chromium reads for a non-default profile, and what tests use); otherwise the user-level folder of the browser.
 */
export function nativeHostManifestDir(browser: BrowserName, userDataDir?: string): string {
  if (userDataDir) return join(userDataDir, "NativeMessagingHosts");
  const home = homedir();
  if (platform() === "darwin") {
    const vendor = browser === "chrome" ? join("Google", "Chrome") : "Chromium";
    return join(home, "Library", "Application Support", vendor, "NativeMessagingHosts");
  }
  return join(home, ".config", browser === "chrome" ? "google-chrome" : "chromium", "NativeMessagingHosts");
}

export interface NativeHostManifest {
  name: string;
  description: string;
  path: string;
  type: "stdio";
  allowed_origins: string[];
}

export async function writeNativeHostManifest(options: {
  dir: string;
  hostPath: string;
  extensionIds: readonly string[];
}): Promise<string> {
  const manifest: NativeHostManifest = {
    name: NATIVE_HOST_NAME,
    description: "Pedelec native messaging host: connects the Pedelec extension to the Pedelec desktop runtime.",
    path: options.hostPath,
    type: "stdio",
    allowed_origins: options.extensionIds.map((id) => `chrome-extension://${id}/`),
  };
  await mkdir(options.dir, { recursive: true });
  const file = join(options.dir, `${NATIVE_HOST_NAME}.json`);
  await writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o644 });
  return file;
}

export async function removeNativeHostManifest(dir: string): Promise<{ file: string; existed: boolean }> {
  const file = join(dir, `${NATIVE_HOST_NAME}.json`);
  try {
    await rm(file);
    return { file, existed: true };
  } catch {
    return { file, existed: false };
  }
}
