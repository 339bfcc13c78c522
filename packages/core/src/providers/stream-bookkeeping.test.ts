import { describe, expect, it, vi } from "vitest";
import type { ProviderEvent } from "./provider-adapter.js";
import { StreamBookkeeping } from "./stream-bookkeeping.js";
import type { SetAsideStreamLine } from "./stream-line.js";

type TestLine = { kind: "greeting"; name: string } | SetAsideStreamLine;

/** A toy stream: `hello <name>` is read, `?<type>` is a type not read, `!<type>` an invalid one, anything else text. */
function classifyTestLine(text: string): TestLine {
  if (text.startsWith("hello ")) return { kind: "greeting", name: text.slice(6) };
  if (text.startsWith("?")) return { kind: "unknown", lineType: text.slice(1) };
  if (text.startsWith("!")) return { kind: "invalid", lineType: text.slice(1), issues: `${text.slice(1)}: missing` };
  return { kind: "not-json" };
}

function feedAll(bookkeeping: StreamBookkeeping, texts: string[]): { lines: TestLine[]; events: ProviderEvent[][] } {
  const lines: TestLine[] = [];
  const events = texts.map((text) =>
    bookkeeping.feed(text, classifyTestLine, (line, lineEvents) => {
      lines.push(line);
      if (line.kind === "greeting") lineEvents.push({ type: "provider-session-started", providerSessionId: line.name });
    }),
  );
  return { lines, events };
}

describe("StreamBookkeeping", () => {
  it("makes every line output seen, and hands the reader each line that is not blank, after its own events", () => {
    const { lines, events } = feedAll(new StreamBookkeeping("codex"), ["hello ada", "   ", "?plan", "banner"]);
    expect(events).toEqual([
      [{ type: "output-seen" }, { type: "provider-session-started", providerSessionId: "ada" }],
      [{ type: "output-seen" }],
      [{ type: "output-seen" }],
      [{ type: "output-seen" }],
    ]);
    expect(lines.map((line) => line.kind)).toEqual(["greeting", "unknown", "not-json"]);
  });

  it("counts the lines set aside: the first invalid one's problem, a few samples of text, unknown types", () => {
    const bookkeeping = new StreamBookkeeping("codex");
    const texts = ["!result", "!assistant", ...Array.from({ length: 7 }, (_, index) => `banner ${index}`), "?plan", "?plan"];
    feedAll(bookkeeping, [...texts, "x".repeat(300)]);
    const counts = bookkeeping.counts();
    expect(counts).toEqual({
      problem: { lineType: "result", issues: "result: missing" },
      invalidLineCount: 2,
      ignoredLineCount: 8,
      ignoredLineSamples: ["banner 0", "banner 1", "banner 2", "banner 3", "banner 4"],
      droppedLineCount: 0,
    });
    expect(bookkeeping.unknownLineCount).toBe(2);
  });

  it("keeps ignored-line samples short", () => {
    const bookkeeping = new StreamBookkeeping("claude");
    feedAll(bookkeeping, ["x".repeat(300)]);
    const [sample] = bookkeeping.counts().ignoredLineSamples;
    expect(Buffer.byteLength(sample ?? "")).toBeLessThanOrEqual(200);
    expect(sample).toMatch(/^x+…$/);
  });

  it("counts a dropped line as output seen", () => {
    const bookkeeping = new StreamBookkeeping("cursor");
    expect(bookkeeping.lineDropped()).toEqual([{ type: "output-seen" }]);
    expect(bookkeeping.lineDropped()).toEqual([{ type: "output-seen" }]);
    expect(bookkeeping.counts().droppedLineCount).toBe(2);
  });

  it("hands out a copy of the samples, so a summary does not change after it is read", () => {
    const bookkeeping = new StreamBookkeeping("opencode");
    feedAll(bookkeeping, ["first"]);
    const counts = bookkeeping.counts();
    feedAll(bookkeeping, ["second"]);
    expect(counts.ignoredLineSamples).toEqual(["first"]);
  });

  it("logs an unknown line type through the provider's once-only note", () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      feedAll(new StreamBookkeeping("antigravity"), ["?stream-bookkeeping-test", "?stream-bookkeeping-test"]);
    } finally {
      spy.mockRestore();
    }
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0]!)).toMatchObject({ provider: "antigravity", lineType: "stream-bookkeeping-test" });
  });
});
