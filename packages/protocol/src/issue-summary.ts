import { describeJsonPath } from "./json-limits.js";

/** How many schema issues an error reports; the rest are only counted. */
export const MAX_REPORTED_ISSUES = 3;
/** Longest issue message an error repeats (zod lists every unknown key in one message). */
export const MAX_ISSUE_MESSAGE_LENGTH = 160;

/** The parts of a schema issue (zod's or any similar) that are worth reporting. */
export interface IssueLike {
  code?: string;
  path?: readonly PropertyKey[];
  message?: string;
}

export interface ReportedIssue {
  code: string;
  /** Rendered by describeJsonPath: clipped keys, a long path keeps its start and end. */
  path: string;
  message: string;
}

export interface IssueSummary {
  /** One line naming the first few issues, e.g. `skills.tools[0].name: must start with a letter (and 2 more)`. */
  message: string;
  /** For PedelecError details: the first few issues and how many there were in all. */
  details: { issues: ReportedIssue[]; issueCount: number };
}

/**
 * Summarizes schema issues for an error that goes back over a wire. The size stays bounded whatever the input was
 * (100,000 unknown keys still make a message of a few hundred bytes) and no value from the input is quoted beyond
 * a clipped key name.
 */
export function summarizeIssues(issues: readonly IssueLike[]): IssueSummary {
  const reported = issues.slice(0, MAX_REPORTED_ISSUES).map(
    (issue): ReportedIssue => ({
      code: clipText(issue.code ?? "invalid", 40),
      path: describeJsonPath(issue.path ?? []),
      message: clipText(issue.message ?? "is invalid", MAX_ISSUE_MESSAGE_LENGTH),
    }),
  );
  const more = issues.length - reported.length;
  const message = reported.map((issue) => `${issue.path}: ${issue.message}`).join("; ") + (more > 0 ? ` (and ${more} more)` : "");
  return { message: message === "" ? "invalid input" : message, details: { issues: reported, issueCount: issues.length } };
}

/** Cuts `text` to at most `maxLength` characters (plus an ellipsis), with control characters made visible. */
export function clipText(text: string, maxLength: number): string {
  const clipped = text.length <= maxLength ? text : `${text.slice(0, maxLength)}…`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the pattern exists to find control characters
  return clipped.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
}
