import { describe, expect, it } from "vitest";
import { controlsState, statusLabel } from "./controls-state.js";

describe("controlsState", () => {
  it("offers only Connect before a session", () => {
    expect(controlsState({ connecting: false, status: undefined, ending: false })).toEqual({
      connect: true,
      sessionOptions: true,
      send: false,
      end: false,
    });
  });

  it("disables everything while connecting", () => {
    expect(controlsState({ connecting: true, status: undefined, ending: false })).toEqual({
      connect: false,
      sessionOptions: false,
      send: false,
      end: false,
    });
  });

  it("allows Send only when idle or after an error, and End while the session lives", () => {
    for (const status of ["idle", "error"] as const) {
      expect(controlsState({ connecting: false, status, ending: false })).toMatchObject({ send: true, end: true, connect: false });
    }
    for (const status of ["running", "waiting_tool_result"] as const) {
      expect(controlsState({ connecting: false, status, ending: false })).toMatchObject({ send: false, end: true, connect: false });
    }
    expect(controlsState({ connecting: false, status: "idle", ending: true })).toMatchObject({ send: false, end: false });
    // Sent, but Core's "running" has not arrived yet.
    expect(controlsState({ connecting: false, status: "idle", ending: false, sending: true })).toMatchObject({ send: false, end: true });
  });

  it("offers Connect again once the session ended", () => {
    expect(controlsState({ connecting: false, status: "ended", ending: false })).toEqual({
      connect: true,
      sessionOptions: true,
      send: false,
      end: false,
    });
  });

  it("keeps Send available while Core is away, since the next message resumes the session", () => {
    for (const status of ["idle", "error", "running", "waiting_tool_result"] as const) {
      expect(controlsState({ connecting: false, status, ending: false, coreLost: true })).toMatchObject({ send: true, end: true });
    }
    expect(controlsState({ connecting: false, status: "error", ending: false, sending: true, coreLost: true })).toMatchObject({ send: false });
    expect(controlsState({ connecting: false, status: "ended", ending: false, coreLost: true })).toMatchObject({ send: false, connect: true });
  });
});

describe("statusLabel", () => {
  it("says Core stopped instead of the last status while Core is away", () => {
    expect(statusLabel({ connecting: false, status: "running", coreLost: true })).toBe("core stopped");
    expect(statusLabel({ connecting: false, status: "idle", coreLost: true })).toBe("core stopped");
    expect(statusLabel({ connecting: false, status: "ended", coreLost: true })).toBe("ended");
  });

  it("shows the session's status otherwise", () => {
    expect(statusLabel({ connecting: true, status: undefined })).toBe("connecting");
    expect(statusLabel({ connecting: false, status: undefined })).toBe("not connected");
    expect(statusLabel({ connecting: false, status: "waiting_tool_result" })).toBe("waiting_tool_result");
  });
});
