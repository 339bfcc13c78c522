// Set-up file of every test (vitest.config.ts): Core's JSON log lines that reach this process's stderr (from Core
// started inside the test, and from the children whose stderr a test passes on to its own) are kept for the test
// that was running, and printed only when it fails. Lines written outside a test (beforeAll, afterAll) are printed
// when a test of the file failed. Every other write to stderr passes through, and a test that watches
// process.stderr.write itself (a spy, a replaced method) sees Core's lines as before.
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { RunnerTestSuite } from "vitest";

type StderrWrite = typeof process.stderr.write;

/** Lines written outside any test of the file. */
const fileLines: string[] = [];
/** Where a log line goes now: the running test's lines, or the file's. */
let kept: string[] = fileLines;
let originalWrite: StderrWrite | undefined;

/** Whether every line of `text` is a log line: a JSON object whose first key is `level`, as Core writes them. */
function isLogText(text: string): boolean {
  const lines = text.split("\n").filter((line) => line !== "");
  return lines.length > 0 && lines.every((line) => line.startsWith('{"level":"'));
}

function textOf(chunk: unknown): string | undefined {
  if (typeof chunk === "string") return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("utf8");
  return undefined;
}

function keepingWrite(passOn: StderrWrite): StderrWrite {
  return function write(this: unknown, chunk: unknown, ...rest: unknown[]): boolean {
    const text = textOf(chunk);
    if (text === undefined || !isLogText(text)) return (passOn as (...args: unknown[]) => boolean).call(process.stderr, chunk, ...rest);
    kept.push(text.endsWith("\n") ? text : `${text}\n`);
    const callback = rest.find((argument): argument is (error?: Error | null) => void => typeof argument === "function");
    if (callback !== undefined) queueMicrotask(() => callback(null));
    return true;
  } as StderrWrite;
}

function printKept(lines: readonly string[], what: string): void {
  if (lines.length === 0) return;
  console.error(`Log lines of ${what}:\n${lines.join("")}`);
}

function hasFailure(suite: Readonly<RunnerTestSuite>): boolean {
  if (suite.result?.state === "fail" || (suite.result?.errors?.length ?? 0) > 0) return true;
  return suite.tasks.some((task) => (task.type === "suite" ? hasFailure(task) : task.result?.state === "fail"));
}

beforeAll(() => {
  originalWrite = process.stderr.write;
  process.stderr.write = keepingWrite(originalWrite);
});

beforeEach((context) => {
  const lines: string[] = [];
  kept = lines;
  context.onTestFailed(() => printKept(lines, `the failed test "${context.task.name}"`));
});

afterEach(() => {
  kept = fileLines;
});

// vitest wants the first argument, the hook's fixtures, as a destructuring pattern; this hook uses none of them.
// biome-ignore lint/correctness/noEmptyPattern: vitest reads the hook's fixtures from this pattern and rejects any other first argument
afterAll(({}, suite) => {
  if (originalWrite !== undefined) process.stderr.write = originalWrite;
  if (hasFailure(suite)) printKept(fileLines, "this file outside its tests");
  fileLines.length = 0;
});
