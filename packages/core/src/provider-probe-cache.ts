import { createHash } from "node:crypto";
import { mkdir, readFile, realpath, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { PROVIDER_NAMES, type ProviderCode } from "@pedelec/protocol/domain";
import type { ProviderDiscovery } from "./providers/provider-adapter.js";
import { log } from "./logger.js";
import { writePrivateFileAtomically } from "./private-file.js";

/** How long a probe's answer stands for an unchanged executable and environment. */
export const PROBE_CACHE_MAX_AGE_MS = 24 * 60 * 60 * 1000;

const fingerprintSchema = z.strictObject({
  realPath: z.string(),
  dev: z.number(),
  ino: z.number(),
  size: z.number(),
  mtimeMs: z.number(),
  ctimeMs: z.number(),
});
type Fingerprint = z.infer<typeof fingerprintSchema>;

const entrySchema = z.strictObject({
  executablePath: z.string(),
  fingerprint: fingerprintSchema,
  /** A digest of the environment the probe ran with: sign-in can depend on it (CURSOR_API_KEY, PATH for node). */
  environment: z.string(),
  version: z.string(),
  probedAt: z.number(),
});
type Entry = z.infer<typeof entrySchema>;

const providerCodes = Object.keys(PROVIDER_NAMES) as [ProviderCode, ...ProviderCode[]];
const fileSchema = z.strictObject({
  version: z.literal(1),
  probes: z.partialRecord(z.enum(providerCodes), entrySchema),
});

/**
 * The last successful probe of each provider (`<cli> --version`, and its sign-in check), kept across Core restarts in
 * PEDELEC_HOME. A Core that the browser starts answers its first createSession without starting the CLI when the
 * executable is the same file (device, inode, size, change times) probed with the same environment within a day.
 * Only "available" answers are kept: an unavailable provider is always probed again. The file is a cache: unreadable,
 * it is ignored and written anew.
 */
export class ProviderProbeCache {
  #entries: Promise<Map<ProviderCode, Entry>> | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The kept answer for `provider` at `executablePath` under `env`, if it still stands. */
  async lookup(provider: ProviderCode, executablePath: string, env: Record<string, string>): Promise<ProviderDiscovery | undefined> {
    const entry = (await this.#load()).get(provider);
    if (entry === undefined || entry.executablePath !== executablePath) return undefined;
    if (this.now() - entry.probedAt > PROBE_CACHE_MAX_AGE_MS || entry.environment !== environmentDigest(env)) return undefined;
    const fingerprint = await fingerprintOf(executablePath);
    if (fingerprint === undefined || !sameFingerprint(fingerprint, entry.fingerprint)) return undefined;
    return { available: true, executablePath, version: entry.version, error: null };
  }

  /** Keeps an "available" answer, or forgets the provider's entry for any other. Never rejects. */
  async record(provider: ProviderCode, discovery: ProviderDiscovery, env: Record<string, string>): Promise<void> {
    if (discovery.transient) return;
    const entries = await this.#load();
    const { executablePath, version } = discovery;
    const fingerprint = executablePath === null ? undefined : await fingerprintOf(executablePath);
    if (discovery.available && executablePath !== null && version !== null && fingerprint !== undefined) {
      entries.set(provider, { executablePath, fingerprint, environment: environmentDigest(env), version, probedAt: this.now() });
    } else if (!entries.delete(provider)) {
      return;
    }
    await this.#save(entries);
  }

  #load(): Promise<Map<ProviderCode, Entry>> {
    this.#entries ??= readFile(this.file, "utf8")
      .then(
        (text) => {
          const parsed = fileSchema.safeParse(JSON.parse(text));
          if (!parsed.success) return new Map();
          return new Map(Object.entries(parsed.data.probes) as [ProviderCode, Entry][]);
        },
        () => new Map(),
      )
      .catch(() => new Map());
    return this.#entries;
  }

  /** Writes the whole file through a temporary one, one write at a time, so a reader never sees half of it. */
  #save(entries: Map<ProviderCode, Entry>): Promise<void> {
    const text = `${JSON.stringify({ version: 1, probes: Object.fromEntries(entries) }, null, 2)}\n`;
    this.#writing = this.#writing.then(async () => {
      try {
        await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
        await writePrivateFileAtomically(this.file, text);
      } catch (error) {
        log("warn", "could not keep the provider probe cache", { file: this.file, error: String(error) });
      }
    });
    return this.#writing;
  }
}

async function fingerprintOf(executablePath: string): Promise<Fingerprint | undefined> {
  try {
    const realPath = await realpath(executablePath);
    const info = await stat(realPath);
    return { realPath, dev: info.dev, ino: info.ino, size: info.size, mtimeMs: info.mtimeMs, ctimeMs: info.ctimeMs };
  } catch {
    return undefined;
  }
}

function sameFingerprint(left: Fingerprint, right: Fingerprint): boolean {
  return (Object.keys(left) as (keyof Fingerprint)[]).every((key) => left[key] === right[key]);
}

function environmentDigest(env: Record<string, string>): string {
  const hash = createHash("sha256");
  for (const key of Object.keys(env).sort()) hash.update(`${key}\0${env[key]}\0`);
  return hash.digest("base64url");
}
