import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { localRequestSchemas, type RequestResult } from "@pedelec/protocol/requests";

/**
 * Checks Core's answer to toolSpec against the protocol's schema. A tool's argsSchema is a recursive structure only
 * the full schema describes, so this is loaded on demand: `tool-call`, the command agents run most, never loads it.
 */
export function checkToolSpecResult(result: unknown): RequestResult<"toolSpec"> {
  const parsed = localRequestSchemas.toolSpec.result.safeParse(result);
  if (parsed.success) return parsed.data;
  const summary = summarizeIssues(parsed.error.issues);
  throw new PedelecError("SDK_PROTOCOL_ERROR", `Core answered toolSpec with an invalid result: ${summary.message}`, summary.details);
}
