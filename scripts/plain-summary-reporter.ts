import { appendFileSync } from "node:fs";
import type { Reporter, SerializedError, TestModule } from "vitest/node";

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, that any CI log reader understands, preceded by
 * one line per failed test and per error outside a test, so the end of a long log says what failed. With
 * PEDELEC_TEST_FAILURES_FILE set, those lines are appended to that file as well (the Node-line runner collects them).
 */
export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const failures: string[] = [];
    for (const testModule of testModules) {
      const moduleErrors = testModule.errors();
      if (moduleErrors.length > 0) failures.push(`${testModule.moduleId}: ${firstLine(moduleErrors[0])}`);
      for (const test of testModule.children.allTests()) {
        const result = test.result();
        if (result.state === "passed") counts.passed += 1;
        else if (result.state === "failed") {
          counts.failed += 1;
          failures.push(`${testModule.relativeModuleId} > ${test.fullName}: ${firstLine(result.errors?.[0])}`);
        } else counts.skipped += 1;
      }
    }
    for (const error of unhandledErrors) failures.push(`error outside a test: ${firstLine(error)}`);
    const lines = failures.map((failure) => `FAILED ${failure}\n`).join("");
    process.stdout.write(`\n${lines}${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
    const file = process.env.PEDELEC_TEST_FAILURES_FILE;
    if (file !== undefined && lines !== "") appendFileSync(file, lines);
  }
}

function firstLine(error: SerializedError | undefined): string {
  if (error === undefined) return "(no error recorded)";
  return `${error.name ?? "Error"}: ${String(error.message ?? "").split("\n")[0]}`.slice(0, 300);
}
