import { dirname } from "node:path";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { runCliSubcommand } from "../cli-subcommand.js";

/** What an OpenCode provider id looks like (`anthropic`, `openrouter`, `my-proxy.v2`). */
const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** `opencode models <provider> --verbose` loads OpenCode's whole configuration: 3–4 s here, so it gets 20 on a busy machine. */
const MODELS_REPORT_TIMEOUT_MS = 20_000;

/**
 * The variant names OpenCode has for `model` (`provider/model`), as `opencode models <provider> --verbose` prints them:
 * OpenCode sends a variant's settings only when the model defines it, and ignores any other `--variant` without a word,
 * so an explicit effort is checked here first. Null when OpenCode lists no such model.
 */
export async function opencodeModelVariants(
  executablePath: string,
  model: string,
  env: Record<string, string>,
  signal: AbortSignal,
): Promise<string[] | null> {
  const slash = model.indexOf("/");
  const provider = model.slice(0, Math.max(slash, 0));
  // The page names the model: a provider id that could read as an option (`--help/x`) never reaches OpenCode's argv.
  if (!PROVIDER_ID.test(provider)) return null;
  // Outside any project, as a sandbox turn reads no project configuration.
  const run = await runCliSubcommand(
    executablePath,
    ["models", provider, "--verbose"],
    dirname(executablePath),
    signal,
    env,
    MODELS_REPORT_TIMEOUT_MS,
  );
  if (run?.spawnError)
    throw new PedelecError("PROVIDER_UNAVAILABLE", `OpenCode could not be started: ${run.spawnError.message}`, { provider: "opencode" });
  if (run === null || run.exitCode !== 0) {
    const why = run === null ? "did not answer in time" : `exited with ${run.exitCode}: ${run.stderr.trim().slice(0, 500)}`;
    throw new PedelecError("PROVIDER_FAILED", `OpenCode could not list its models to check the effort (opencode models ${why})`, {
      provider: "opencode",
    });
  }
  return variantsOf(run.stdout, model);
}

/** The report is, per model, a line with its `provider/model` name and then its JSON, closed by a `}` line of its own. */
export function variantsOf(report: string, model: string): string[] | null {
  const lines = report.split("\n");
  const start = lines.indexOf(model);
  if (start < 0 || lines[start + 1] !== "{") return null;
  const end = lines.indexOf("}", start + 1);
  if (end < 0) return null;
  let entry: unknown;
  try {
    entry = JSON.parse(lines.slice(start + 1, end + 1).join("\n"));
  } catch {
    return null;
  }
  const variants = (entry as { variants?: unknown } | null)?.variants;
  return typeof variants === "object" && variants !== null && !Array.isArray(variants) ? Object.keys(variants) : [];
}
