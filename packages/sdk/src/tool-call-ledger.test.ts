import { describe, expect, it } from "vitest";
import { ToolCallLedger } from "./tool-call-ledger.js";

describe("ToolCallLedger", () => {
  it("lets one taker hold a call, frees a released call, and never frees a finished one", () => {
    const ledger = new ToolCallLedger();
    expect(ledger.take("session-a", "call-1")).toBe(true);
    expect(ledger.take("session-a", "call-1")).toBe(false);
    expect(ledger.take("session-b", "call-1")).toBe(true); // ids are per session
    ledger.release("session-a", "call-1");
    expect(ledger.take("session-a", "call-1")).toBe(true);
    ledger.finish("session-a", "call-1");
    expect(ledger.take("session-a", "call-1")).toBe(false);
  });

  it("forgets the oldest finished calls beyond its limit, never a call still taken", () => {
    const ledger = new ToolCallLedger(2);
    expect(ledger.take("s", "running")).toBe(true);
    ledger.finish("s", "done-1");
    ledger.finish("s", "done-2"); // three entries: the oldest finished one goes
    expect(ledger.take("s", "done-1")).toBe(true);
    expect(ledger.take("s", "running")).toBe(false);
    expect(ledger.take("s", "done-2")).toBe(false);
  });
});
