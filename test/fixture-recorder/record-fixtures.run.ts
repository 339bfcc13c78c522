// `npm run record-fixtures`: runs the pinned real claude, codex and opencode in a few scenarios against scripted model
// servers and writes what they print into each provider's fixtures/recorded/ folder. Not a test: vitest only hosts it
// (test/fixture-recorder/vitest.config.ts), for the root's resolve aliases and TypeScript without a build.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "vitest";
import { PROCESS_TAG_VARIABLE } from "@pedelec/core/process-tag";
import { SCRIPTED_TITLE_DELTAS } from "../model-servers/scripted-model-server.js";
import type { ModelServer } from "../model-servers/model-server-types.js";
import { privateCliEnvironment, type PrivateCliEnvironment } from "../real-clis/cli-environment.js";
import { realCliPath, realCliVersion } from "../real-clis/real-clis.js";
import { CLI_RECORDING_SETUPS, type CliRecordingSetup } from "./cli-recording-setups.js";
import { describeReply } from "./describe-reply.js";
import { markdownCode, renderRecordedReadme, type RecordedRunProvenance, type RecordedVariable } from "./recorded-provenance.js";
import { scriptedReply, type RecordedScenarioResult, type RecordingScenario } from "./recording-scenarios.js";
import { runRealCli } from "./run-real-cli.js";

/** Every run is bounded; a CLI still running then is ended with its whole process group. */
const RUN_TIMEOUT_MS = 60_000;
/** How many times an `everyRequest` reply is scripted: more than any CLI retries. */
const EVERY_REQUEST_COPIES = 100;
const TOOL_RESULT_SHOWN_CHARS = 300;

const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url));
/** A plain system PATH, with the folder of this Node first (codex's launcher is a Node script). */
const BASE_PATH = [...new Set([dirname(process.execPath), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"])].join(
  delimiter,
);

const recordedFolder = (setup: CliRecordingSetup): string =>
  join(repositoryRoot, "packages", "core", "src", "providers", setup.cli, "fixtures", "recorded");

/** A private HOME, TMPDIR and workspace with one model server: a scenario's own, or shared by the one resuming it. */
interface RecordingContext {
  server: ModelServer;
  workspace: string;
  cliEnvironment: PrivateCliEnvironment;
  /** The session id the context's first run printed. */
  sessionId: string | null;
}

function printedSessionId(stdout: string, field: string): string | null {
  for (const line of stdout.split("\n")) {
    try {
      const value = (JSON.parse(line) as Record<string, unknown>)[field];
      if (typeof value === "string" && value !== "") return value;
    } catch {
      // Not a JSON line.
    }
  }
  return null;
}

const isSecret = (name: string): boolean => /KEY|TOKEN|SECRET|PASSWORD/i.test(name);

function environmentOf(
  cliEnvironment: PrivateCliEnvironment,
  adapterEnv: Record<string, string>,
  scenario: RecordingScenario,
  processTag: string,
): RecordedVariable[] {
  return [
    { name: "PATH", value: BASE_PATH, note: "a plain system PATH with this Node's folder" },
    ...Object.entries(cliEnvironment.env).map(([name, value]) => ({
      name,
      value: isSecret(name) ? null : value,
      note: "privateCliEnvironment (test/real-clis/cli-environment.ts)",
    })),
    ...Object.entries(adapterEnv).map(([name, value]) => ({ name, value, note: "added by the adapter for this access mode" })),
    ...(scenario.env ?? []).map(({ name, value, note }) => ({ name, value, note })),
    { name: PROCESS_TAG_VARIABLE, value: processTag, note: "a fresh tag per run, as Core sets it" },
  ];
}

function scriptReplies(server: ModelServer, scenario: RecordingScenario): void {
  const every = scenario.everyRequest;
  if (every !== undefined) {
    server.script(...Array.from({ length: EVERY_REQUEST_COPIES }, () => every));
    return;
  }
  server.script(...scenario.replies.map(scriptedReply));
}

function describeServer(setup: CliRecordingSetup, scenario: RecordingScenario): string[] {
  if (scenario.everyRequest !== undefined) return [`${describeReply(scenario.everyRequest, setup.format)}, to every turn request`];
  return scenario.replies.map((reply) => describeReply(reply, setup.format));
}

/** Facts about the run from the model server's side, and from outside the workspace. */
function observationsOf(scenario: RecordingScenario, server: ModelServer, requestsBefore: number, outsideAppeared: boolean | null): string[] {
  const requests = server.requests.slice(requestsBefore);
  const turns = requests.filter((request) => request.purpose === "turn");
  const titles = requests.length - turns.length;
  const observations = [
    `model requests received: ${turns.length}` +
      (titles > 0 ? ` (and ${titles} title request(s), answered by the server itself with ${JSON.stringify(SCRIPTED_TITLE_DELTAS.join(""))})` : ""),
  ];
  if (scenario.everyRequest === undefined && turns.length < scenario.replies.length) {
    observations.push(`only ${turns.length} of the ${scenario.replies.length} scripted replies were asked for`);
  }
  for (const result of turns.flatMap((request) => request.toolResults)) {
    const shown = result.length > TOOL_RESULT_SHOWN_CHARS ? `${result.slice(0, TOOL_RESULT_SHOWN_CHARS)}…` : result;
    observations.push(`a tool result the model server received: ${markdownCode(JSON.stringify(shown))}`);
  }
  if (scenario.outsidePath !== undefined) {
    observations.push(
      outsideAppeared
        ? `\`${scenario.outsidePath}\` appeared outside the workspace (the recorder removed it)`
        : `\`${scenario.outsidePath}\` did not appear`,
    );
  }
  return observations;
}

async function newContext(setup: CliRecordingSetup, folder: string, name: string): Promise<RecordingContext> {
  const server = await setup.startServer();
  const contextFolder = join(folder, name);
  const workspace = join(contextFolder, "workspace");
  await mkdir(workspace, { recursive: true });
  return { server, workspace, cliEnvironment: await privateCliEnvironment(setup.cli, server, contextFolder), sessionId: null };
}

/** One recorded run: its stdout as printed, its provenance, and what later scenarios may ask about it. */
interface ScenarioRecording {
  stdout: Buffer;
  provenance: RecordedRunProvenance;
  result: RecordedScenarioResult;
}

/** Runs one scenario in `context` (resuming `resumed`'s session when given) and says how it went. */
async function recordScenario(
  setup: CliRecordingSetup,
  scenario: RecordingScenario,
  context: RecordingContext,
  resumed: boolean,
): Promise<ScenarioRecording> {
  const providerSessionId = resumed ? context.sessionId : null;
  const argv = setup.argv({ access: scenario.access, providerSessionId, workspacePath: context.workspace });
  const adapterEnv = setup.adapterEnv(scenario.access);
  const scenarioEnv = Object.fromEntries((scenario.env ?? []).map(({ name, value }) => [name, value]));
  if (scenario.outsidePath !== undefined) await rm(scenario.outsidePath, { force: true });
  const requestsBefore = context.server.requests.length;
  scriptReplies(context.server, scenario);
  const recordedAt = new Date().toISOString();
  const executablePath = realCliPath(setup.cli);
  const run = await runRealCli({
    executablePath,
    args: argv,
    cwd: context.workspace,
    env: { PATH: BASE_PATH, ...context.cliEnvironment.env, ...adapterEnv, ...scenarioEnv },
    stdin: scenario.prompt,
    timeoutMs: RUN_TIMEOUT_MS,
  });
  let outsideAppeared: boolean | null = null;
  if (scenario.outsidePath !== undefined) {
    outsideAppeared = existsSync(scenario.outsidePath);
    await rm(scenario.outsidePath, { force: true });
  }
  context.sessionId ??= printedSessionId(run.stdout.toString("utf8"), setup.sessionIdField);
  const file = `${scenario.name}.jsonl`;
  console.log(`${setup.cli} ${file}: exit ${run.exitCode ?? run.signal}, ${(run.durationMs / 1000).toFixed(1)} s`);
  return {
    stdout: run.stdout,
    result: { requests: context.server.requests.slice(requestsBefore).filter((request) => request.purpose === "turn") },
    provenance: {
      file,
      purpose: scenario.purpose + (resumed ? ` The resumed id is \`${providerSessionId}\`.` : ""),
      cliLabel: setup.label,
      version: realCliVersion(setup.cli),
      executable: relative(repositoryRoot, executablePath),
      recordedAt,
      durationMs: run.durationMs,
      argv,
      cwd: context.workspace,
      cwdNote: resumed ? `the workspace of \`${scenario.resumes}.jsonl\`` : "a fresh temp workspace",
      stdin: scenario.prompt,
      environment: environmentOf(context.cliEnvironment, adapterEnv, scenario, run.processTag),
      serverReplies: describeServer(setup, scenario),
      observations: observationsOf(scenario, context.server, requestsBefore, outsideAppeared),
      exitCode: run.exitCode,
      signal: run.signal,
      timedOut: run.timedOut,
      stderr: run.stderr,
    },
  };
}

/**
 * Runs every scenario of one CLI, then replaces the files of its `recorded/` folder: each stdout as printed, and the
 * README that says where each came from. Nothing is written when a run throws.
 */
async function recordCli(setup: CliRecordingSetup): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), `pedelec-record-${setup.cli}-`));
  const contexts = new Map<string, RecordingContext>();
  const results = new Map<string, RecordedScenarioResult>();
  const recordings: ScenarioRecording[] = [];
  const notRecorded: string[] = [];
  try {
    for (const scenario of setup.scenarios) {
      if (scenario.when !== undefined && !scenario.when.holds(results)) {
        notRecorded.push(scenario.when.skippedBecause);
        continue;
      }
      const resumed = scenario.resumes === undefined ? undefined : contexts.get(scenario.resumes);
      if (scenario.resumes !== undefined && (resumed === undefined || resumed.sessionId === null)) {
        notRecorded.push(`\`${scenario.name}.jsonl\` is not recorded: \`${scenario.resumes}.jsonl\` printed no session id to resume.`);
        continue;
      }
      const context = resumed ?? (await newContext(setup, folder, scenario.name));
      contexts.set(scenario.name, context);
      const recording = await recordScenario(setup, scenario, context, resumed !== undefined);
      results.set(scenario.name, recording.result);
      recordings.push(recording);
    }
  } finally {
    await Promise.all([...new Set(contexts.values())].map((context) => context.server.close()));
    await rm(folder, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
  const target = recordedFolder(setup);
  await mkdir(target, { recursive: true });
  const files = new Set(recordings.map((recording) => recording.provenance.file));
  for (const name of await readdir(target)) {
    if (name.endsWith(".jsonl") && !files.has(name)) await rm(join(target, name));
  }
  for (const { provenance, stdout } of recordings) await writeFile(join(target, provenance.file), stdout);
  const provenance = recordings.map((recording) => recording.provenance);
  await writeFile(join(target, "README.md"), renderRecordedReadme(setup.label, provenance, notRecorded));
}

describe("record the fixtures of the real CLIs", () => {
  for (const setup of CLI_RECORDING_SETUPS) {
    it(`records ${setup.cli}`, () => recordCli(setup));
  }
});
