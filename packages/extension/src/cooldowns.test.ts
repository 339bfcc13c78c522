import { describe, expect, it } from "vitest";
import { Cooldowns } from "./cooldowns.js";

describe("Cooldowns", () => {
  it("holds each subject until its own deadline, then forgets it", () => {
    let now = new Date("2025-01-01T10:00:00.000Z");
    const cooldowns = new Cooldowns<string>(() => now);
    cooldowns.start("a", "https://a.example", 60_000);
    cooldowns.start("b", "https://b.example", 30_000);
    cooldowns.start("never", "https://c.example", 0);
    expect(cooldowns.list().map((entry) => entry.subject)).toEqual(["https://b.example", "https://a.example"]);
    expect(cooldowns.get("never")).toBeUndefined();

    now = new Date("2025-01-01T10:00:30.000Z");
    expect(cooldowns.get("b")).toBeUndefined();
    expect(cooldowns.get("a")).toMatchObject({ subject: "https://a.example", until: new Date("2025-01-01T10:01:00.000Z") });

    cooldowns.clear("a");
    expect(cooldowns.list()).toEqual([]);
  });
});
