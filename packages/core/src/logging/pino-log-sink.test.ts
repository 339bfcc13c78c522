import { describe, expect, it } from "vitest";
import { plainLogLine, type LogRecord } from "./log-record.js";
import { REDACTED_FIELD_NAMES, REDACTION_CENSOR, redactFields } from "./log-redaction.js";
import { PinoLogSink } from "./pino-log-sink.js";

/** A log call the way a careless one would carry a page's content and secrets. */
function recordWithContent(level: LogRecord["level"] = "info"): LogRecord {
  return {
    time: "2026-05-01T10:00:00.123Z",
    level,
    message: "tool call answered",
    fields: {
      sessionId: "session-1",
      args: { title: "TOP-SECRET-ARGS" },
      result: "TOP-SECRET-RESULT",
      apiKey: "sk-TOP-SECRET-KEY",
      request: { prompt: "TOP-SECRET-PROMPT", type: "sendText" },
      stderr: "TOP-SECRET-OUTPUT",
    },
  };
}

function capture(debug: boolean): { sink: PinoLogSink; lines: () => Record<string, unknown>[]; text: () => string } {
  const written: string[] = [];
  const sink = new PinoLogSink({ write: (line) => written.push(line) }, { debug });
  return { sink, lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>), text: () => written.join("") };
}

describe("PinoLogSink", () => {
  it("writes the keys log readers know: the record's own ISO time, the level as a word, message, pid", () => {
    const { sink, lines, text } = capture(false);
    sink.write({ time: "2026-05-01T10:00:00.123Z", level: "warn", message: "settings.json is not usable", fields: { problem: "bad" } });
    expect(lines()).toEqual([
      { time: "2026-05-01T10:00:00.123Z", level: "warn", message: "settings.json is not usable", pid: process.pid, problem: "bad" },
    ]);
    expect(text().endsWith("\n")).toBe(true);
    expect(text().split("\n")).toHaveLength(2);
  });

  it("writes no content or secret by default, and everything with debug on", () => {
    const quiet = capture(false);
    quiet.sink.write(recordWithContent());
    expect(quiet.text()).not.toContain("TOP-SECRET");
    expect(quiet.lines()[0]).toMatchObject({
      sessionId: "session-1",
      args: REDACTION_CENSOR,
      result: REDACTION_CENSOR,
      apiKey: REDACTION_CENSOR,
      request: { prompt: REDACTION_CENSOR, type: "sendText" },
      stderr: REDACTION_CENSOR,
    });

    const debug = capture(true);
    debug.sink.write(recordWithContent());
    expect(debug.lines()[0]).toMatchObject(recordWithContent().fields);
  });

  it("writes debug lines only with debug on, and follows a change of the setting", () => {
    const { sink, lines, text } = capture(false);
    sink.write(recordWithContent("debug"));
    expect(lines()).toEqual([]);
    sink.setDebug(true);
    sink.write(recordWithContent("debug"));
    expect(lines()).toHaveLength(1);
    expect(text()).toContain("TOP-SECRET-ARGS");
    sink.setDebug(false);
    sink.write(recordWithContent("info"));
    expect(lines()).toHaveLength(2);
    expect(text().split("\n")[1]).not.toContain("TOP-SECRET");
  });

  it("redacts exactly as the plain writer does (lines written before pino is loaded, or at a sudden exit)", () => {
    // Every redacted name at the top level and one level down, beside fields that stay.
    const fields: Record<string, unknown> = { kept: "visible", nested: { kept: "visible" }, list: [{ args: "in a list" }] };
    for (const name of REDACTED_FIELD_NAMES) {
      fields[name] = `top ${name}`;
      fields[`${name}Holder`] = { [name]: `nested ${name}`, kept: 1 };
    }
    const record: LogRecord = { time: "2026-05-01T10:00:00.000Z", level: "info", message: "m", fields };
    const { sink, lines } = capture(false);
    sink.write(record);
    const plain = JSON.parse(plainLogLine(record, redactFields(fields))) as Record<string, unknown>;
    expect(lines()[0]).toEqual(plain);
    expect(JSON.stringify(plain)).not.toMatch(/top |nested /);
    expect(plain).toMatchObject({ kept: "visible", nested: { kept: "visible" } });
    // The input is left as it was.
    expect(fields.args).toBe("top args");
  });

  it("never throws into its caller, even for fields JSON cannot hold", () => {
    const { sink, lines } = capture(false);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => sink.write({ time: "2026-05-01T10:00:00.000Z", level: "error", message: "cyclic", fields: { cyclic, big: 10n } })).not.toThrow();
    expect(lines()[0]).toMatchObject({ level: "error", message: "cyclic" });
  });
});
