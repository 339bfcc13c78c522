import { z } from "zod";
import { describe, expect, it } from "vitest";
import { MAX_REPORTED_ISSUES, summarizeIssues } from "./issue-summary.js";
import { PedelecError } from "./pedelec-error.js";

describe("summarizeIssues", () => {
  it("keeps an error about 100,000 unknown keys to a few hundred bytes", () => {
    const payload = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`unknown_key_${index}`, index]));
    const parsed = z.strictObject({ sessionId: z.string() }).safeParse(payload);
    expect(parsed.success).toBe(false);
    const summary = summarizeIssues(parsed.error!.issues);
    const wire = JSON.stringify(new PedelecError("INVALID_INPUT", summary.message, summary.details).toWire());
    expect(wire.length).toBeLessThan(1024);
    expect(summary.message).toContain("sessionId");
    expect(summary.details.issueCount).toBe(parsed.error!.issues.length);
  });

  it("reports the first few issues with their paths and counts the rest", () => {
    const schema = z.object({ items: z.array(z.object({ name: z.string() })) });
    const parsed = schema.safeParse({ items: Array.from({ length: 10 }, () => ({ name: 1 })) });
    const summary = summarizeIssues(parsed.error!.issues);
    expect(summary.details.issues).toHaveLength(MAX_REPORTED_ISSUES);
    expect(summary.details.issues[0]).toMatchObject({ code: "invalid_type", path: "items[0].name" });
    expect(summary.details.issueCount).toBe(10);
    expect(summary.message).toMatch(/^items\[0\]\.name: .*\(and 7 more\)$/);
  });

  it("clips long messages and paths", () => {
    const summary = summarizeIssues([{ code: "custom", path: ["x".repeat(5000)], message: "m".repeat(5000) }]);
    expect(summary.message.length).toBeLessThan(300);
  });
});
