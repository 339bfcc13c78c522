import { compileLinearPattern, type LinearPattern } from "@pedelec/protocol/linear-regex";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ArgsSchemaNode, ObjectSchemaNode } from "@pedelec/protocol/tool-schema";
import { firstUncomparableProperty, schemaUsesUniqueItems } from "@pedelec/protocol/uncomparable-args";

/**
 * Checks tool arguments against the protocol's argsSchema subset in the page, with the meaning Core's Ajv gives it
 * (strict numbers, lengths in code points, patterns searched by the same linear-time engine, `oneOf` matching exactly
 * one option, a property present only when it is the object's own, and the names uniqueItems cannot compare refused
 * as Core refuses them: see uncomparable-args.ts).
 */

/** One reason the arguments do not match. */
export interface ArgsIssue {
  /** Where in the arguments, e.g. `["tags", 2]`; empty for the arguments object itself. */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** Reports at most this many issues; a huge wrong array would otherwise make a message as big as itself. */
const MAX_ISSUES = 20;

/** Builds the checker of one schema. Patterns are compiled on first use, so a tool never called costs nothing. */
export function argsSchemaChecker(schema: ObjectSchemaNode): (args: unknown) => ArgsIssue[] {
  const patterns = new Map<string, LinearPattern>();
  const patternFor = (source: string): LinearPattern => {
    let pattern = patterns.get(source);
    if (pattern === undefined) {
      const compiled = compileLinearPattern(source);
      // createSession refuses such a pattern before any call; a schema built another way still fails closed.
      if (!compiled.ok) throw new PedelecError("INVALID_INPUT", `pattern ${JSON.stringify(source)} is not supported: ${compiled.reason}`);
      pattern = compiled.pattern;
      patterns.set(source, pattern);
    }
    return pattern;
  };
  const usesUniqueItems = schemaUsesUniqueItems(schema);
  return (args) => {
    const uncomparable = usesUniqueItems ? firstUncomparableProperty(args) : null;
    if (uncomparable !== null) {
      return [{ path: uncomparable, message: "is a property name this tool's uniqueItems check cannot compare (toString, valueOf)" }];
    }
    const issues: ArgsIssue[] = [];
    check(schema, args, [], { issues, patternFor });
    return issues;
  };
}

interface CheckState {
  readonly issues: ArgsIssue[];
  readonly patternFor: (source: string) => LinearPattern;
}

/** Adds the value's issues to `state.issues` (up to MAX_ISSUES); returns whether it matched. */
function check(node: ArgsSchemaNode, value: unknown, path: (string | number)[], state: CheckState): boolean {
  const report = (message: string, where: (string | number)[] = path): false => {
    if (state.issues.length < MAX_ISSUES) state.issues.push({ path: [...where], message });
    return false;
  };
  if ("oneOf" in node) {
    let matched = 0;
    for (const option of node.oneOf) {
      if (check(option, value, path, { issues: [], patternFor: state.patternFor })) matched += 1;
      if (matched > 1) break;
    }
    if (matched === 1) return true;
    return report(matched === 0 ? "must match one of the options of oneOf" : "must match exactly one option of oneOf, not several");
  }
  switch (node.type) {
    case "string": {
      if (typeof value !== "string") return report("must be a string");
      let valid = true;
      if (node.enum !== undefined && !node.enum.includes(value)) valid = report("must be one of the allowed values");
      if (node.minLength !== undefined || node.maxLength !== undefined) {
        const length = codePointLength(value);
        if (node.minLength !== undefined && length < node.minLength) valid = report(`must have at least ${node.minLength} characters`);
        if (node.maxLength !== undefined && length > node.maxLength) valid = report(`must have at most ${node.maxLength} characters`);
      }
      if (node.pattern !== undefined) {
        let matches: boolean;
        try {
          matches = state.patternFor(node.pattern).test(value);
        } catch (error) {
          // The matching budget ran out (a value too long for its pattern): refused, as Core refuses it.
          return report(error instanceof Error ? error.message : `cannot be checked against pattern ${JSON.stringify(node.pattern)}`);
        }
        if (!matches) valid = report(`must match pattern ${JSON.stringify(node.pattern)}`);
      }
      return valid;
    }
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) return report(`must be a ${node.type}`);
      if (node.type === "integer" && !Number.isInteger(value)) return report("must be an integer");
      let valid = true;
      if (node.enum !== undefined && !node.enum.includes(value)) valid = report("must be one of the allowed values");
      if (node.minimum !== undefined && value < node.minimum) valid = report(`must be at least ${node.minimum}`);
      if (node.maximum !== undefined && value > node.maximum) valid = report(`must be at most ${node.maximum}`);
      return valid;
    }
    case "boolean":
      return typeof value === "boolean" || report("must be a boolean");
    case "array": {
      if (!Array.isArray(value)) return report("must be an array");
      let valid = true;
      if (node.minItems !== undefined && value.length < node.minItems) valid = report(`must have at least ${node.minItems} items`);
      if (node.maxItems !== undefined && value.length > node.maxItems) valid = report(`must have at most ${node.maxItems} items`);
      if (node.items !== undefined) {
        for (let index = 0; index < value.length; index += 1) {
          path.push(index);
          if (!check(node.items, value[index], path, state)) valid = false;
          path.pop();
        }
      }
      if (node.uniqueItems === true) {
        const duplicate = firstDuplicate(value);
        if (duplicate !== null) valid = report(`must not have duplicate items (items ${duplicate[0]} and ${duplicate[1]} are equal)`);
      }
      return valid;
    }
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return report("must be an object");
      const record = value as Record<string, unknown>;
      const properties = node.properties ?? {};
      let valid = true;
      for (const name of node.required ?? []) {
        if (!Object.hasOwn(record, name)) valid = report(`must have property ${JSON.stringify(name)}`);
      }
      for (const [name, property] of Object.entries(properties)) {
        if (!Object.hasOwn(record, name)) continue;
        path.push(name);
        if (!check(property, record[name], path, state)) valid = false;
        path.pop();
      }
      if (node.additionalProperties === false) {
        for (const name of Object.keys(record)) {
          if (!Object.hasOwn(properties, name)) valid = report("must not have additional properties", [...path, name]);
        }
      }
      return valid;
    }
  }
}

/** Length as JSON Schema counts it: code points, a surrogate pair being one character. */
function codePointLength(text: string): number {
  let length = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index += 1;
    }
    length += 1;
  }
  return length;
}

/** The indexes of the first two equal items (JSON equality), or null. */
function firstDuplicate(items: readonly unknown[]): [number, number] | null {
  const seen = new Map<string, number>();
  for (let index = 0; index < items.length; index += 1) {
    const key = canonicalKey(items[index]);
    const earlier = seen.get(key);
    if (earlier !== undefined) return [earlier, index];
    seen.set(key, index);
  }
  return null;
}

/** A text equal for equal JSON values: object keys sorted, `-0` written as `0` (JSON equality has 0 === -0). */
function canonicalKey(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalKey).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalKey(record[key])}`)
      .join(",")}}`;
  }
  if (typeof value === "number") return Object.is(value, -0) ? "0" : JSON.stringify(value);
  return JSON.stringify(value) ?? "undefined";
}
