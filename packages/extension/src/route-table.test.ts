import { describe, expect, it } from "vitest";
import { RouteTable } from "./route-table.js";

const session = (sessionId: string, autoEndOnDisconnect = true) => ({ sessionId, origin: "https://app.example", autoEndOnDisconnect });

describe("RouteTable", () => {
  it("fans a session out to every subscribed route", () => {
    const table = new RouteTable<string>();
    table.subscribe("tab-1", session("session-aaaa"));
    table.subscribe("tab-2", session("session-aaaa"));
    table.subscribe("tab-1", session("session-bbbb"));
    expect(table.routesFor("session-aaaa")).toEqual(["tab-1", "tab-2"]);
    expect(table.routesFor("session-bbbb")).toEqual(["tab-1"]);
    expect(table.routesFor("session-cccc")).toEqual([]);
  });

  it("reports a session as orphaned only when its last route goes", () => {
    const table = new RouteTable<string>();
    table.subscribe("tab-1", session("session-aaaa"));
    table.subscribe("tab-2", session("session-aaaa"));
    table.subscribe("tab-1", session("session-bbbb", false));
    expect(table.removeRoute("tab-1")).toEqual([session("session-bbbb", false)]);
    expect(table.has("session-aaaa")).toBe(true);
    expect(table.removeRoute("tab-2")).toEqual([session("session-aaaa")]);
    expect(table.sessions()).toEqual([]);
  });

  it("drops a session with all its routes", () => {
    const table = new RouteTable<string>();
    table.subscribe("tab-1", session("session-aaaa"));
    expect(table.dropSession("session-aaaa")).toBe(true);
    expect(table.dropSession("session-aaaa")).toBe(false);
    expect(table.removeRoute("tab-1")).toEqual([]);
  });
});
