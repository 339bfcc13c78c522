import { z } from "zod";
import { accessModeSchema } from "./domain.js";

/** Default and largest run time of one script (SPEC §6: 60 s default). */
export const DEFAULT_RUN_TIMEOUT_MS = 60_000;
export const MAX_RUN_TIMEOUT_MS = 10 * 60_000;
/** Script source given on stdin or through `workspace.run({ source })` (characters). */
export const MAX_SCRIPT_SOURCE_LENGTH = 1024 * 1024;
export const MAX_RUN_ARGS = 256;
export const MAX_RUN_ARG_LENGTH = 64 * 1024;
/** Bytes of stdout and of stderr kept per run; the rest is dropped and the run marked truncated. */
export const RUN_OUTPUT_CAP_BYTES = 1024 * 1024;

/** Exit codes of `pedelec-ts-runtime` for Pedelec's own outcomes (everything else is the script's own code). */
export const RUNTIME_REFUSAL_EXIT_CODE = 125;
export const RUNTIME_TIMEOUT_EXIT_CODE = 124;

/** A workspace-relative path as callers write it; the runner resolves and confines it. */
export const workspaceRelativePathSchema = z.string().min(1).max(4096);

const runArgsSchema = z.array(z.string().max(MAX_RUN_ARG_LENGTH)).max(MAX_RUN_ARGS);

/** What to run: a workspace file, or source text that runs from the workspace root. Exactly one of the two. */
export const scriptRunSpecShape = {
  entry: workspaceRelativePathSchema.optional(),
  source: z.string().min(1).max(MAX_SCRIPT_SOURCE_LENGTH).optional(),
  args: runArgsSchema.optional(),
  /** A workspace-relative import map; validated before the run. */
  importMap: workspaceRelativePathSchema.optional(),
  timeoutMs: z.number().int().min(1).max(MAX_RUN_TIMEOUT_MS).optional(),
};

/** Refines an object holding `scriptRunSpecShape` so that exactly one of entry and source is given. */
export function withOneEntry<T extends z.ZodType<{ entry?: string; source?: string }>>(schema: T) {
  return schema.refine((spec) => (spec.entry === undefined) !== (spec.source === undefined), {
    message: "give exactly one of entry and source",
    path: ["entry"],
  });
}

export const scriptRunSpecSchema = withOneEntry(z.strictObject(scriptRunSpecShape));
export type ScriptRunSpec = z.infer<typeof scriptRunSpecSchema>;

/** How a run ended, as far as Pedelec is concerned. `exited` covers every exit of the script's own making. */
export const runTerminationSchema = z.enum(["exited", "timeout", "cancelled", "memory-limit"]);
export type RunTermination = z.infer<typeof runTerminationSchema>;

/** The outcome of one run (SPEC §2), plus how it ended and which walls held it. */
export const scriptRunResultSchema = z.object({
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  stdoutTruncated: z.boolean(),
  stderrTruncated: z.boolean(),
  timedOut: z.boolean(),
  durationMs: z.number().min(0),
  termination: runTerminationSchema,
  access: accessModeSchema,
  /** The boundaries that contained the run, for example `["deno-permissions", "bubblewrap"]`; empty in Full Access. */
  walls: z.array(z.string()),
  processTreeCleanupError: z.string().optional(),
  captureError: z.string().optional(),
});
export type ScriptRunResult = z.infer<typeof scriptRunResultSchema>;

/** Script output streamed to `pedelec-ts-runtime` while its run goes on (Core → that client only). */
export const runOutputFrameSchema = z.strictObject({
  kind: z.literal("run-output"),
  /** The id of the runScript request this output belongs to. */
  id: z.string().min(1).max(128),
  stream: z.enum(["stdout", "stderr"]),
  /** The bytes as the script wrote them, base64, so output that is not UTF-8 passes through unchanged. */
  data: z.string(),
});
export type RunOutputFrame = z.infer<typeof runOutputFrameSchema>;

export const runIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1–128 letters, digits, '_' or '-'");
