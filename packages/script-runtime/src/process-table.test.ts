import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { parseLdd } from "./shared-libraries.js";
import { groupResidentKib, listProcesses, parseStat, readProcessEntry } from "./process-table.js";

describe("process table", () => {
  it("parses a stat line whose command holds spaces and parentheses", () => {
    const line = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 0";
    expect(parseStat(4242, line)).toEqual({ pid: 4242, command: "a (weird) name", state: "S", ppid: 1, pgrp: 4242, startTime: "987654" });
    expect(parseStat(1, "garbage")).toBeNull();
  });

  it("sees this process and its group's memory", async () => {
    const self = readProcessEntry(process.pid);
    expect(self?.ppid).toBe(process.ppid);
    expect(listProcesses().some((entry) => entry.pid === process.pid)).toBe(true);
    const child = spawn("sleep", ["5"], { detached: true, stdio: "ignore" });
    try {
      const pid = child.pid as number;
      expect(readProcessEntry(pid)?.pgrp).toBe(pid);
      expect(groupResidentKib(pid)).toBeGreaterThan(0);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("parses ldd output and refuses missing libraries", () => {
    const output = [
      "\tlinux-vdso.so.1 (0x00007ffd)",
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f69af134000)",
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f69b520e000)",
    ].join("\n");
    expect(parseLdd(output)).toEqual(["/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"]);
    expect(() => parseLdd("\tlibfoo.so.1 => not found\n")).toThrow(expect.objectContaining({ code: "DENO_UNAVAILABLE" }));
  });
});
