import type { ArgsSchemaNode } from "./tool-schema.js";

/**
 * Core checks `uniqueItems` with Ajv, whose deep comparison calls an object's `toString` and `valueOf` as methods when
 * they are not the inherited ones; in arguments parsed from JSON such a property holds data, and the comparison
 * throws. So for a tool whose schema has `uniqueItems` anywhere, arguments with an object that owns one of these
 * names are refused, by Core and by the page alike, before anything compares them.
 */
export const UNCOMPARABLE_PROPERTY_NAMES: readonly string[] = ["toString", "valueOf"];

/** Whether `uniqueItems: true` appears anywhere in the schema. */
export function schemaUsesUniqueItems(node: ArgsSchemaNode): boolean {
  if ("oneOf" in node) return node.oneOf.some(schemaUsesUniqueItems);
  switch (node.type) {
    case "array":
      return node.uniqueItems === true || (node.items !== undefined && schemaUsesUniqueItems(node.items));
    case "object":
      return Object.values(node.properties ?? {}).some(schemaUsesUniqueItems);
    default:
      return false;
  }
}

/** The path of the first object in `value` that owns a name of UNCOMPARABLE_PROPERTY_NAMES, or null. */
export function firstUncomparableProperty(value: unknown, path: (string | number)[] = []): (string | number)[] | null {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const found = firstUncomparableProperty(value[index], [...path, index]);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  for (const name of UNCOMPARABLE_PROPERTY_NAMES) if (Object.hasOwn(value, name)) return [...path, name];
  for (const [key, child] of Object.entries(value)) {
    const found = firstUncomparableProperty(child, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}
