import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "./error-codes.js";

const ERRORS_DOC = new URL("../../../docs/errors.md", import.meta.url);

/** The layers docs/errors.md groups the codes by, as its `## ` headings spell them. */
const LAYERS = ["Page SDK", "Extension", "Native host", "Core", "Provider adapters", "Script runtime", "Asset server"];

/** Each code's entry says who raises it, what it means and what the app should do, in this order. */
const ENTRY_FIELDS = ["**Raised by:**", "**Means:**", "**What to do:**"];

/** Names in capitals the doc may mention that are not error codes: environment variables. */
const NOT_ERROR_CODES: ReadonlySet<string> = new Set(["PEDELEC_HOME"]);

/** Anything spelled like a code: capitals and digits joined by underscores, e.g. `SESSION_BUSY`. */
const CODE_LIKE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;

interface CodeEntry {
  code: string;
  layer: string | undefined;
  body: string;
}

interface ErrorsDoc {
  entries: CodeEntry[];
  /** Every code-like name anywhere in the doc, headings, tables, prose and code included. */
  namesMentioned: Set<string>;
}

function parseErrorsDoc(text: string): ErrorsDoc {
  const entries: CodeEntry[] = [];
  let layer: string | undefined;
  let current: CodeEntry | undefined;
  for (const line of text.split("\n")) {
    const layerHeading = /^## (.+?)\s*$/.exec(line);
    if (layerHeading) {
      layer = LAYERS.includes(layerHeading[1]!) ? layerHeading[1] : undefined;
      current = undefined;
      continue;
    }
    const codeHeading = /^### (.+?)\s*$/.exec(line);
    if (codeHeading) {
      const named = /^`([^`]+)`$/.exec(codeHeading[1]!);
      current = { code: named ? named[1]! : codeHeading[1]!, layer, body: "" };
      entries.push(current);
      continue;
    }
    if (current) current.body += `${line}\n`;
  }
  return { entries, namesMentioned: new Set(text.match(CODE_LIKE) ?? []) };
}

/** What is wrong with the doc, as sentences; empty when it covers the catalogue exactly. */
function problemsOf(doc: ErrorsDoc, catalogue: readonly string[]): string[] {
  const problems: string[] = [];
  const known = new Set(catalogue);
  const counts = new Map<string, number>();
  for (const entry of doc.entries) counts.set(entry.code, (counts.get(entry.code) ?? 0) + 1);
  for (const code of catalogue) {
    if (!counts.has(code)) problems.push(`${code} has no entry`);
  }
  for (const [code, count] of counts) {
    if (!known.has(code)) problems.push(`the entry ${code} is not a code in the catalogue`);
    if (count > 1) problems.push(`${code} has ${count} entries`);
  }
  for (const entry of doc.entries) {
    if (entry.layer === undefined) problems.push(`${entry.code} is not under one of the layers (${LAYERS.join(", ")})`);
    let from = 0;
    for (const field of ENTRY_FIELDS) {
      const at = entry.body.indexOf(field, from);
      if (at === -1) {
        problems.push(`${entry.code} lacks ${field} (or has it out of order)`);
        break;
      }
      const next = entry.body.indexOf("**", at + field.length);
      const text = entry.body.slice(at + field.length, next === -1 ? undefined : next).trim();
      if (text.length < 10) problems.push(`${entry.code} says next to nothing after ${field}`);
      from = at + field.length;
    }
  }
  for (const name of doc.namesMentioned) {
    if (!known.has(name) && !NOT_ERROR_CODES.has(name)) problems.push(`${name} is mentioned but is not a code in the catalogue`);
  }
  return problems;
}

const ENTRY = "- **Raised by:** the SDK, somewhere.\n- **Means:** something went wrong.\n- **What to do:** retry the call.\n";

describe("docs/errors.md", () => {
  const doc = parseErrorsDoc(readFileSync(ERRORS_DOC, "utf8"));

  it("has one entry per catalogue code, each under a layer, saying who raises it, what it means and what to do", () => {
    expect(problemsOf(doc, ERROR_CODES)).toEqual([]);
    expect(doc.entries.map((entry) => entry.code).sort()).toEqual([...ERROR_CODES].sort());
  });

  it("names no code that the catalogue lacks", () => {
    const unknown = [...doc.namesMentioned].filter((name) => !(ERROR_CODES as readonly string[]).includes(name) && !NOT_ERROR_CODES.has(name));
    expect(unknown).toEqual([]);
  });

  it("uses every layer it groups by", () => {
    expect(new Set(doc.entries.map((entry) => entry.layer))).toEqual(new Set(LAYERS));
  });
});

describe("the check of docs/errors.md", () => {
  const catalogue = ["SESSION_BUSY", "TURN_CANCELLED"];

  it("accepts a doc that covers the catalogue", () => {
    const text = `# Codes\n\n## Core\n\n### \`SESSION_BUSY\`\n${ENTRY}\n### \`TURN_CANCELLED\`\n${ENTRY}`;
    expect(problemsOf(parseErrorsDoc(text), catalogue)).toEqual([]);
  });

  it("reports a catalogue code without an entry", () => {
    const text = `## Core\n\n### \`SESSION_BUSY\`\n${ENTRY}`;
    expect(problemsOf(parseErrorsDoc(text), catalogue)).toEqual(["TURN_CANCELLED has no entry"]);
  });

  it("reports an entry, or a mention, of a code that does not exist", () => {
    const text = `## Core\n\n### \`SESSION_BUSY\`\n${ENTRY}\n### \`TURN_CANCELLED\`\n${ENTRY}\n### \`TURN_CANCELED\`\n${ENTRY}See \`SESSION_GONE\`.\n`;
    expect(problemsOf(parseErrorsDoc(text), catalogue)).toEqual([
      "the entry TURN_CANCELED is not a code in the catalogue",
      "TURN_CANCELED is mentioned but is not a code in the catalogue",
      "SESSION_GONE is mentioned but is not a code in the catalogue",
    ]);
  });

  it("reports a duplicate, an entry outside the layers and a missing field", () => {
    const text = `## Triage\n\n### \`TURN_CANCELLED\`\n${ENTRY}\n## Core\n\n### \`SESSION_BUSY\`\n${ENTRY}\n### \`SESSION_BUSY\`\n- **Raised by:** Core, on a second turn.\n- **Means:** busy, really busy.\n`;
    expect(problemsOf(parseErrorsDoc(text), catalogue)).toEqual([
      "SESSION_BUSY has 2 entries",
      "TURN_CANCELLED is not under one of the layers (Page SDK, Extension, Native host, Core, Provider adapters, Script runtime, Asset server)",
      "SESSION_BUSY lacks **What to do:** (or has it out of order)",
    ]);
  });
});
