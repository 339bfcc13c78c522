import { readFileSync } from "node:fs";
import { stripVTControlCharacters } from "node:util";

/** One variable of a recorded run's environment; `value` is null where it is secret. */
export interface RecordedVariable {
  name: string;
  value: string | null;
  /** Why the run has it, when that is not plain from the name. */
  note?: string;
}

/** Where one recorded file came from: everything a reader needs to run it again, and how it ended. */
export interface RecordedRunProvenance {
  /** The file name in `recorded/`, e.g. `plain-answer.jsonl`. */
  file: string;
  /** What the run shows, one sentence. */
  purpose: string;
  cliLabel: string;
  version: string;
  /** The executable, relative to the repository root. */
  executable: string;
  recordedAt: string;
  durationMs: number;
  argv: readonly string[];
  cwd: string;
  /** Whose workspace the cwd is: a fresh one, or that of the run this one resumes. */
  cwdNote: string;
  stdin: string;
  /** The run's whole environment: it starts from nothing, so every variable is listed. */
  environment: readonly RecordedVariable[];
  /** What the model server answered, in order. */
  serverReplies: readonly string[];
  /** Other facts seen during the run (requests received, files outside the workspace). */
  observations: readonly string[];
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stderr: string;
}

/** How a recorded run ended, as its provenance README says. */
export interface RecordedExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

const STDERR_SHOWN_CHARS = 3_000;

/** A Markdown code span showing `text` exactly, backticks included. */
export function markdownCode(text: string): string {
  if (!text.includes("`")) return `\`${text}\``;
  const fence = "`".repeat(Math.max(...(text.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  return `${fence} ${text} ${fence}`;
}

function exitLine(exitCode: number | null, signal: string | null): string {
  return `- exit: code ${exitCode ?? "none"}, signal ${signal ?? "none"}`;
}

function stderrBlock(stderr: string): string[] {
  const plain = stripVTControlCharacters(stderr).trimEnd();
  if (plain === "") return ["- stderr: empty"];
  const shown =
    plain.length > STDERR_SHOWN_CHARS ? `${plain.slice(0, STDERR_SHOWN_CHARS)}\n… (${plain.length - STDERR_SHOWN_CHARS} more characters)` : plain;
  return ["- stderr (terminal colours removed):", "", "  ~~~text", ...shown.split("\n").map((line) => `  ${line}`), "  ~~~"];
}

function section(run: RecordedRunProvenance): string[] {
  const variables = run.environment.map((variable) => {
    const value = variable.value === null ? "(secret, not shown)" : markdownCode(variable.value);
    return `  - ${markdownCode(variable.name)} = ${value}${variable.note === undefined ? "" : ` — ${variable.note}`}`;
  });
  return [
    `## ${markdownCode(run.file)}`,
    "",
    run.purpose,
    "",
    `- CLI: ${run.cliLabel} ${run.version} (${markdownCode(run.executable)})`,
    `- recorded: ${run.recordedAt}, took ${(run.durationMs / 1000).toFixed(1)} s`,
    `- argv (JSON, after the executable): ${markdownCode(JSON.stringify(run.argv))}`,
    `- cwd: ${markdownCode(run.cwd)} (${run.cwdNote})`,
    `- stdin (then closed): ${markdownCode(JSON.stringify(run.stdin))}`,
    "- environment (the whole of it):",
    ...variables,
    "- model server replied:",
    ...run.serverReplies.map((reply, index) => `  ${index + 1}. ${reply}`),
    ...run.observations.map((observation) => `- ${observation}`),
    exitLine(run.exitCode, run.signal),
    ...(run.timedOut ? ["- the recorder ended this run at its time limit"] : []),
    ...stderrBlock(run.stderr),
    "",
  ];
}

/** The README of one CLI's `recorded/` folder: how the files were made, then one section per file. */
export function renderRecordedReadme(cliLabel: string, runs: readonly RecordedRunProvenance[], notRecorded: readonly string[]): string {
  return [
    `# ${cliLabel}: recorded real output`,
    "",
    `Every \`.jsonl\` file here is the stdout of one run of the real, pinned ${cliLabel} CLI, byte for byte as it printed it.`,
    "Written by `npm run record-fixtures` (test/fixture-recorder/); do not edit by hand, run it again. Each run used the",
    "argv the adapter builds (for a sandbox session unless its section says Full Access), a private HOME and TMPDIR",
    "(test/real-clis/cli-environment.ts), the prompt on stdin, a temp workspace as cwd, and a scripted model server on",
    "127.0.0.1 in the wire format this CLI speaks (test/model-servers/). Volatile values (temp paths, ids, timestamps,",
    "ports) are left as printed.",
    "The replay tests (`../../*-recorded-replay.test.ts`) read the exit line of each section below.",
    "",
    ...notRecorded.flatMap((line) => [`- ${line}`]),
    ...(notRecorded.length > 0 ? [""] : []),
    ...runs.flatMap(section),
  ].join("\n");
}

/** The exit code and signal that a `recorded/README.md` gives for one of its files. */
export function readRecordedExit(readmePath: string | URL, file: string): RecordedExit {
  const text = readFileSync(readmePath, "utf8");
  const start = text.indexOf(`## \`${file}\``);
  if (start === -1) throw new Error(`${String(readmePath)} has no section for ${file}`);
  const next = text.indexOf("\n## ", start + 1);
  const body = text.slice(start, next === -1 ? undefined : next);
  const match = /^- exit: code (\S+), signal (\S+)$/m.exec(body);
  if (match === null) throw new Error(`the section for ${file} in ${String(readmePath)} has no exit line`);
  const [, exitCode = "none", signal = "none"] = match;
  return {
    exitCode: exitCode === "none" ? null : Number(exitCode),
    signal: signal === "none" ? null : (signal as NodeJS.Signals),
  };
}
