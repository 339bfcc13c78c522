import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { assignedTag, endTaggedProcesses, findTaggedProcesses, isProcessTag, killTaggedProcesses, PROCESS_TAG_VARIABLE } from "./process-tag.js";
import { newProcessTag } from "./providers/provider-process.js";
import { isGone, TestProcesses, waitUntil } from "./testing/test-processes.js";

const hasProc = existsSync("/proc/self/environ");
const started = new TestProcesses();
afterEach(async () => {
  await started.endAll();
});

/** A `sleep` in a session of its own with `env` (and PATH), as a tool a CLI ran with setsid. */
function startSleeper(env: Record<string, string>, script = "exec sleep 300"): number {
  const child = spawn("/bin/sh", ["-c", script], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    detached: true,
    stdio: "ignore",
  });
  child.unref();
  return started.add(child.pid!);
}

function environ(...entries: string[]): Buffer {
  return Buffer.from(`${entries.join("\0")}\0`, "latin1");
}

describe("process tags", () => {
  const tag = "0123456789abcdef0123456789abcdef";
  const tags = new Set([tag]);

  it("are 128 random bits in hex, and the name avoids the words codex filters out", () => {
    const first = newProcessTag();
    expect(isProcessTag(first)).toBe(true);
    expect(newProcessTag()).not.toBe(first);
    for (const bad of ["", "0123", `${tag}0`, tag.toUpperCase(), `${tag.slice(1)}\n`]) expect(isProcessTag(bad)).toBe(false);
    expect(PROCESS_TAG_VARIABLE).not.toMatch(/KEY|SECRET|TOKEN/i);
  });

  it("match only a whole entry assigning the variable exactly one of the tags", () => {
    expect(assignedTag(environ(`${PROCESS_TAG_VARIABLE}=${tag}`, "HOME=/h"), tags)).toBe(tag);
    expect(assignedTag(environ("HOME=/h", `${PROCESS_TAG_VARIABLE}=${tag}`), tags)).toBe(tag);
    // No trailing NUL (a truncated read).
    expect(assignedTag(Buffer.from(`A=1\0${PROCESS_TAG_VARIABLE}=${tag}`, "latin1"), tags)).toBe(tag);
    // A later duplicate still counts; the first one is another value.
    expect(assignedTag(environ(`${PROCESS_TAG_VARIABLE}=other`, `${PROCESS_TAG_VARIABLE}=${tag}`), tags)).toBe(tag);
    expect(assignedTag(environ(`${PROCESS_TAG_VARIABLE}=${tag}0`), tags)).toBeNull();
    expect(assignedTag(environ(`${PROCESS_TAG_VARIABLE}=${tag.slice(0, 31)}`), tags)).toBeNull();
    expect(assignedTag(environ(`X_${PROCESS_TAG_VARIABLE}=${tag}`), tags)).toBeNull();
    expect(assignedTag(environ(`NOTE=${PROCESS_TAG_VARIABLE}=${tag}`), tags)).toBeNull();
    expect(assignedTag(environ(`${PROCESS_TAG_VARIABLE}=`), tags)).toBeNull();
    expect(assignedTag(Buffer.alloc(0), tags)).toBeNull();
  });

  it.skipIf(!hasProc)("are found in the environment of live processes, never another value or another name", async () => {
    const mine = newProcessTag();
    const tagged = startSleeper({ [PROCESS_TAG_VARIABLE]: mine });
    const otherValue = startSleeper({ [PROCESS_TAG_VARIABLE]: newProcessTag() });
    const longerValue = startSleeper({ [PROCESS_TAG_VARIABLE]: `${mine}0` });
    const otherName = startSleeper({ [`OTHER_${PROCESS_TAG_VARIABLE}`]: mine });
    // The tag reaches the sleeper once the shell has exec'd it; the shell had it already.
    const found = () => (findTaggedProcesses(new Set([mine])) ?? []).map(({ pid }) => pid);
    expect(await waitUntil(() => found().includes(tagged), 5_000)).toBe(true);
    expect(found()).toEqual([tagged]);
    expect(findTaggedProcesses(new Set())).toEqual([]);
    for (const pid of [otherValue, longerValue, otherName]) expect(isGone(pid)).toBe(false);
  });

  it.skipIf(!hasProc)("are ended with SIGTERM, and SIGKILL after the grace for one that ignores it", async () => {
    const mine = newProcessTag();
    const polite = startSleeper({ [PROCESS_TAG_VARIABLE]: mine });
    const stubborn = startSleeper({ [PROCESS_TAG_VARIABLE]: mine }, "trap '' TERM; exec sleep 300");
    const bystander = startSleeper({ [PROCESS_TAG_VARIABLE]: newProcessTag() });
    expect(await waitUntil(() => findTaggedProcesses(new Set([mine]))?.length === 2, 5_000)).toBe(true);
    const startedAt = Date.now();
    const ended = await endTaggedProcesses(mine, { graceMs: 300 });
    expect(Date.now() - startedAt).toBeLessThan(3_000);
    expect(ended).toMatchObject({ supported: true, left: [] });
    expect(ended.signalled.sort()).toEqual([polite, stubborn].sort());
    expect(await waitUntil(() => isGone(polite) && isGone(stubborn), 2_000)).toBe(true);
    expect(isGone(bystander)).toBe(false);
    // Nothing left: one walk, nothing signalled.
    expect(await endTaggedProcesses(mine, { graceMs: 300 })).toEqual({ supported: true, signalled: [], left: [] });
  });

  it.skipIf(!hasProc)("are killed at once, also what forked from them, by the synchronous kill", async () => {
    const mine = newProcessTag();
    const parent = startSleeper({ [PROCESS_TAG_VARIABLE]: mine }, "sleep 300 & sleep 300 & wait");
    expect(await waitUntil(() => findTaggedProcesses(new Set([mine]))?.length === 3, 5_000)).toBe(true);
    const killed = killTaggedProcesses(new Set([mine]));
    expect(killed).toContain(parent);
    expect(killed).toHaveLength(3);
    expect(await waitUntil(() => killed.every(isGone), 2_000)).toBe(true);
  });
});
