import { readFileSync } from "node:fs";
import type { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { Activity } from "@pedelec/protocol/session-events";
import type { ProviderEvent, ProviderTurnOutcome } from "@pedelec/core/providers/provider-adapter";
import type { ProviderProcessResult } from "@pedelec/core/providers/provider-process";
import { readRecordedExit } from "./recorded-provenance.js";

/** What a parser may hand back for one line: an event, or a request to stop the turn (see cli-runner.ts). */
type ReplayOutput = ProviderEvent | { type: "turn-stop-requested"; error: PedelecError };

/** The parts of a CLI stream parser a replay uses. */
export interface ReplayParser<TSummary> {
  feed(line: string): readonly ReplayOutput[];
  finish(): readonly ReplayOutput[];
  summary(): TSummary;
}

/** One recorded file fed through a parser, and the outcome the adapter gives it. */
export interface RecordedReplay<TSummary> {
  /** The file's lines as the runner splits them. */
  lines: string[];
  /** Every event but the `output-seen` heartbeat. */
  events: ProviderEvent[];
  summary: TSummary;
  /** The first stop request's error when the parser asked to stop the turn (as the runner decides), else the adapter's. */
  outcome: ProviderTurnOutcome;
  /** The process result built from the exit line of the provenance README. */
  run: ProviderProcessResult;
}

/**
 * Replays `recorded/<file>` through `parser` the way the CLI runner feeds a live run (one stdout line at a time, then
 * `finish`), and judges it with `outcome` on the process result the folder's README.md gives for that file. Stderr
 * is not replayed: the README shows it, but the result here has none.
 */
export function replayRecorded<TSummary>(
  folder: URL,
  file: string,
  parser: ReplayParser<TSummary>,
  outcome: (run: ProviderProcessResult, summary: TSummary) => ProviderTurnOutcome,
): RecordedReplay<TSummary> {
  const text = readFileSync(new URL(file, folder), "utf8");
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const outputs: ReplayOutput[] = [];
  for (const line of lines) outputs.push(...parser.feed(line));
  outputs.push(...parser.finish());
  const exit = readRecordedExit(new URL("README.md", folder), file);
  const run: ProviderProcessResult = { ...exit, stderr: "", stderrTruncated: false, spawnError: null, droppedLineCount: 0 };
  const stop = outputs.find((output) => output.type === "turn-stop-requested");
  const events = outputs.filter((output): output is ProviderEvent => output.type !== "turn-stop-requested" && output.type !== "output-seen");
  const summary = parser.summary();
  return { lines, events, summary, outcome: stop === undefined ? outcome(run, summary) : { ok: false, error: stop.error }, run };
}

/** The texts of the completed messages, in order. */
export function completedTexts(events: readonly ProviderEvent[]): string[] {
  return events.flatMap((event) => (event.type === "message-completed" ? [event.text] : []));
}

/** The activity updates of one kind, in order. */
export function activitiesOf(events: readonly ProviderEvent[], kind: Activity["kind"]): Activity[] {
  return events.flatMap((event) => (event.type === "activity" && event.activity.kind === kind ? [event.activity] : []));
}

/** The ids of the provider sessions the events announced, in order. */
export function announcedSessions(events: readonly ProviderEvent[]): string[] {
  return events.flatMap((event) => (event.type === "provider-session-started" ? [event.providerSessionId] : []));
}

/** A field of the first line of a recorded file, read as JSON. */
export function firstLineField(replay: { lines: readonly string[] }, field: string): unknown {
  const first = replay.lines[0];
  if (first === undefined) throw new Error("the recorded file is empty");
  return (JSON.parse(first) as Record<string, unknown>)[field];
}
