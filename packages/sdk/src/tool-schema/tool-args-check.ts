import type { StandardSchemaV1 } from "@standard-schema/spec";
import { summarizeIssues, type IssueLike } from "@pedelec/protocol/issue-summary";
import type { ObjectSchemaNode } from "@pedelec/protocol/tool-schema";
import { argsSchemaChecker } from "./args-schema-validator.js";

/**
 * The page's own check of a tool call's arguments, run before any handler: Core checked them against the JSON
 * subset already, but a Standard Schema says more (refinements, transforms, defaults) and a page trusts no one.
 */

export type ArgsCheck = { ok: true; value: unknown } | { ok: false; message: string; details: unknown };

/** Checks one call's arguments; the value of a passing check is what the handler gets (a schema's output). */
export type ArgsValidator = (args: unknown) => ArgsCheck | PromiseLike<ArgsCheck>;

/** Runs the schema's own `~standard.validate` (sync or async); its output (defaults, transforms) goes to the handler. */
export function standardSchemaValidator(schema: StandardSchemaV1): ArgsValidator {
  return (args) => {
    const result = schema["~standard"].validate(args);
    // Any thenable counts: a schema library may build its promise in another realm.
    return typeof (result as { then?: unknown }).then === "function"
      ? (result as PromiseLike<StandardSchemaV1.Result<unknown>>).then(toCheck)
      : toCheck(result as StandardSchemaV1.Result<unknown>);
  };
}

/** Checks against the argsSchema subset; the handler gets the arguments unchanged. Built on first call. */
export function argsSchemaValidator(schema: ObjectSchemaNode): ArgsValidator {
  let checker: ReturnType<typeof argsSchemaChecker> | undefined;
  return (args) => {
    checker ??= argsSchemaChecker(schema);
    const issues = checker(args);
    if (issues.length === 0) return { ok: true, value: args };
    return failed(issues.map((issue) => ({ code: "invalid", path: issue.path, message: issue.message })));
  };
}

function toCheck(result: StandardSchemaV1.Result<unknown>): ArgsCheck {
  // The spec: a falsy `issues` means success.
  if (!result.issues) return { ok: true, value: (result as { value: unknown }).value };
  const issues = [...result.issues];
  if (issues.length === 0) return failed([{ code: "invalid", path: [], message: "is invalid" }]);
  return failed(
    issues.map((issue) => ({
      code: "invalid",
      path: (issue.path ?? []).map((segment) => (typeof segment === "object" && segment !== null ? segment.key : segment)),
      message: typeof issue.message === "string" ? issue.message : "is invalid",
    })),
  );
}

function failed(issues: readonly IssueLike[]): ArgsCheck {
  // Bounded whatever the number of issues, and quoting no argument value: the message goes back to the agent.
  const summary = summarizeIssues(issues);
  return { ok: false, message: summary.message, details: summary.details };
}
