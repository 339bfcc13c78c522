import { pageRequestSchemas, type PageRequestPayload, type PageRequestResult, type PageRequestType } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

interface SchemaLike {
  safeParse(input: unknown): { success: true; data: unknown } | { success: false; error: { issues: readonly unknown[] } };
}
const schemas: Readonly<Record<string, { payload: SchemaLike; result: SchemaLike }>> = pageRequestSchemas;

/**
 * Checks a request payload before it leaves the page, so bad input fails fast with the schema's issues
 * instead of a round trip. What the schema reads is a valid payload again (the bridge checks it once more).
 */
export function validateRequestPayload<TType extends PageRequestType>(type: TType, payload: unknown): PageRequestPayload<TType> {
  const parsed = schemas[type]!.payload.safeParse(payload);
  if (parsed.success) return parsed.data as PageRequestPayload<TType>;
  throw new PedelecError("INVALID_INPUT", `Invalid ${type} input: ${describeIssues(parsed.error.issues)}`, {
    issues: parsed.error.issues,
  });
}

/** Checks a result from the extension; an unexpected shape is the other side's fault, so SDK_PROTOCOL_ERROR. */
export function validateRequestResult<TType extends PageRequestType>(type: TType, result: unknown): PageRequestResult<TType> {
  const parsed = schemas[type]!.result.safeParse(result);
  if (parsed.success) return parsed.data as PageRequestResult<TType>;
  throw new PedelecError("SDK_PROTOCOL_ERROR", `The extension answered ${type} with an invalid result`, {
    issues: parsed.error.issues,
  });
}

export function describeIssues(issues: readonly unknown[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => {
      const { path, message } = issue as { path?: readonly PropertyKey[]; message?: string };
      const where = path && path.length > 0 ? path.map(String).join(".") : "(root)";
      return `${where}: ${message ?? "invalid"}`;
    })
    .join("; ");
}
