import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SESSION_STATUSES } from "./domain.js";
import { SESSION_STATUS_TRIGGERS, SESSION_TRANSITIONS } from "./session-transitions.js";

const SESSIONS_DOC = new URL("../../../docs/architecture/sessions-and-turns.md", import.meta.url);

/** The doc's transition table: the header's statuses, and for each trigger row the cells, `—` for none. */
function documentedTable(text: string): { statuses: string[]; rows: Map<string, string[]> } {
  const lines = text.split("\n");
  const header = lines.findIndex((line) => line.startsWith("| trigger |"));
  if (header < 0) throw new Error("sessions-and-turns.md has no table starting with `| trigger |`");
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split("|")
      .map((cell) => cell.trim().replaceAll("`", ""));
  const statuses = cells(lines[header]!).slice(1);
  const rows = new Map<string, string[]>();
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    const [trigger, ...next] = cells(line);
    rows.set(trigger!, next);
  }
  return { statuses, rows };
}

describe("docs/architecture/sessions-and-turns.md", () => {
  it("shows the session machine's transition table as the code has it", () => {
    const { statuses, rows } = documentedTable(readFileSync(SESSIONS_DOC, "utf8"));
    expect([...statuses].sort()).toEqual([...SESSION_STATUSES].sort());
    expect([...rows.keys()]).toEqual([...SESSION_STATUS_TRIGGERS]);
    for (const trigger of SESSION_STATUS_TRIGGERS) {
      const expected = statuses.map((status) => SESSION_TRANSITIONS[status as keyof typeof SESSION_TRANSITIONS][trigger] ?? "—");
      expect({ trigger, next: rows.get(trigger) }).toEqual({ trigger, next: expected });
    }
  });
});
