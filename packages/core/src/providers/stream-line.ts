import { z } from "zod";

/*
 * What every CLI's JSON-lines stream has in common, whatever its line types: a line is a JSON object naming its
 * type in one field, a known type is checked against its schema, and anything else is set aside rather than failing
 * the run, so a newer CLI keeps working.
 */

/** JSON, but of a type the parser does not read. */
export type UnknownStreamLine = { kind: "unknown"; lineType: string };
/** Not a JSON object with a string type field (banners, warnings, plain text). */
export type NotJsonStreamLine = { kind: "not-json" };
/** A known type without the fields the parser relies on. */
export type InvalidStreamLine = { kind: "invalid"; lineType: string; issues: string };
/** The lines of every stream that its parser does not read. */
export type SetAsideStreamLine = UnknownStreamLine | NotJsonStreamLine | InvalidStreamLine;

/** A line that is a JSON object, and the type it names. */
export interface ReadStreamLine {
  lineType: string;
  value: Record<string, unknown>;
}

/** How many schema issues an invalid line's description names. */
const ISSUES_NAMED = 5;

/** A string field whose value is none of `taken` (the catch-all arm of a union of known shapes). */
export function stringOtherThan(taken: readonly string[]) {
  return z.string().refine((value) => !taken.includes(value), { message: "known type with missing or malformed fields" });
}

/**
 * Parses one stdout line: the JSON object on it and the string in its `typeField` (`type`, or `event` for CLIs that
 * name their lines so). Null when the line is not a JSON object or that field is not a string.
 */
export function readStreamLine(text: string, typeField: string): ReadStreamLine | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  const lineType = record[typeField];
  if (typeof lineType !== "string") return null;
  return { lineType, value: record };
}

/** Validates a line of a known type: `wrap` classifies it when it fits `schema`, otherwise it is invalid. */
export function checkStreamLine<Schema extends z.ZodType, Line>(
  { lineType, value }: ReadStreamLine,
  schema: Schema,
  wrap: (line: z.infer<Schema>) => Line,
): Line | InvalidStreamLine {
  const parsed = schema.safeParse(value);
  if (parsed.success) return wrap(parsed.data);
  const issues = parsed.error.issues
    .slice(0, ISSUES_NAMED)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(line)"}: ${issue.message}`)
    .join("; ");
  return { kind: "invalid", lineType, issues };
}
