import path from "node:path";
import { z } from "zod";
import type { ProviderDiscovery } from "../provider-adapter.js";
import { probeVersion } from "../provider-discovery.js";
import { runCliSubcommand } from "../cli-subcommand.js";

/** What Pedelec reads of `codex doctor --json`: its verdict on the credentials of the active model provider. */
const doctorReportSchema = z.object({
  checks: z.object({
    "auth.credentials": z.object({
      status: z.string(),
      summary: z.string(),
      remediation: z.string().nullable().optional(),
    }),
  }),
});

/**
 * Is this codex ready to run a turn? `codex login status` knows only codex's own sign-in (ChatGPT or a stored key): it
 * says "Not logged in" (exit 1) for a codex whose model provider takes its key from the environment (a provider's
 * `env_key`, or `OPENAI_API_KEY`), which `codex exec` runs fine with. So a "no" from it is checked with
 * `codex doctor --json`, whose `auth.credentials` check judges the active provider's credentials the way a turn will
 * use them, and names the fix when there are none.
 */
export async function discoverCodex(executablePath: string, signal: AbortSignal, env: Record<string, string>): Promise<ProviderDiscovery> {
  const discovery = await probeVersion(executablePath, signal, env);
  if (!discovery.available) return discovery;
  const loginStatus = await runCliSubcommand(executablePath, ["login", "status"], path.dirname(executablePath), signal, env);
  if (loginStatus === null || loginStatus.spawnError !== null || !isSignedOut(`${loginStatus.stdout}\n${loginStatus.stderr}`, loginStatus.exitCode))
    return discovery;

  const doctor = await runCliSubcommand(executablePath, ["doctor", "--json"], path.dirname(executablePath), signal, env);
  const credentials = doctor === null || doctor.spawnError !== null ? undefined : readCredentialsCheck(doctor.stdout);
  if (credentials?.status === "ok") return discovery;
  const name = path.basename(executablePath);
  const fix = credentials?.remediation ? ` ${credentials.remediation.trim()}` : "";
  const why = credentials === undefined ? "" : ` (${credentials.summary.trim()})`;
  return {
    ...discovery,
    available: false,
    error: `${name} is installed at ${executablePath} but not signed in${why}: run \`codex login\`, or give its model provider a key.${fix}`,
  };
}

/** `codex login status` says "Not logged in" and exits 1 when nobody is signed in. */
function isSignedOut(output: string, exitCode: number | null): boolean {
  return exitCode === 1 && /\bNot logged in\b/i.test(output);
}

function readCredentialsCheck(stdout: string): z.infer<typeof doctorReportSchema>["checks"]["auth.credentials"] | undefined {
  // codex prints warnings on stderr, the report alone on stdout.
  let report: unknown;
  try {
    report = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  const parsed = doctorReportSchema.safeParse(report);
  return parsed.success ? parsed.data.checks["auth.credentials"] : undefined;
}
