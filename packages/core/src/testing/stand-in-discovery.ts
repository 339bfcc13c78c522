import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ProviderAdapter, ProviderDiscovery } from "../providers/provider-adapter.js";
import { discoverProvider } from "../providers/provider-discovery.js";

/** A temporary root that is also HOME, and the environment discovery searches the stand-ins' folder with. */
export interface DiscoveryRoot {
  root: string;
  env: Record<string, string>;
}

/** `stateFolders`: environment variables that point the CLI at its own state, each to a folder of that name under the root. */
export async function createDiscoveryRoot(prefix: string, providerPath: string, stateFolders: Record<string, string>): Promise<DiscoveryRoot> {
  const root = await mkdtemp(path.join(tmpdir(), prefix));
  const stateEnv = Object.fromEntries(Object.entries(stateFolders).map(([name, folder]) => [name, path.join(root, folder)]));
  return { root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, ...stateEnv, PEDELEC_PROVIDER_PATH: providerPath } };
}

/** Discovery as Core runs it, with only the stand-ins' folder, the system PATH and a home to search. */
export function discoverStandIn(adapter: ProviderAdapter, providerPath: string, home: string | undefined): Promise<ProviderDiscovery> {
  return discoverProvider(adapter, { PEDELEC_PROVIDER_PATH: providerPath, PATH: process.env.PATH, HOME: home }, AbortSignal.timeout(10_000));
}
