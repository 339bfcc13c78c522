import { afterEach, describe, expect, it, vi } from "vitest";
import type { PageRequest } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ScriptRunResult } from "@pedelec/protocol/script-run";
import { Pedelec } from "./pedelec.js";
import { errorOf } from "./testing/error-of.js";
import { FakeExtension, NO_REPLY, sessionInfo } from "./testing/fake-extension.js";
import type { PedelecRunOptions } from "./types.js";

const SESSION_ID = "session-0001";

const EXITED: ScriptRunResult = {
  exitCode: 0,
  signal: null,
  stdout: "hello\n",
  stderr: "",
  stdoutTruncated: false,
  stderrTruncated: false,
  timedOut: false,
  durationMs: 42,
  termination: "exited",
  access: "sandbox",
  walls: ["deno-permissions", "bubblewrap"],
};

async function openSession(options: { bridgeTimeoutMs?: number } = {}) {
  const extension = new FakeExtension().install();
  const session = await new Pedelec(options).createSession({ provider: "claude" });
  return { extension, session };
}

function runIdOf(request: PageRequest): string {
  return (request.payload as { runId: string }).runId;
}

/** Lets queued port messages (microtasks) and their answers go through. */
async function flushMessages(): Promise<void> {
  for (let round = 0; round < 5; round += 1) await Promise.resolve();
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("session.workspace.run", () => {
  it("sends an entry run with its options and a fresh run id, and resolves with the result", async () => {
    const { extension, session } = await openSession();
    extension.handle("runWorkspaceScript", () => EXITED);
    const result = await session.workspace.run({ entry: "scripts/report.ts", args: ["--allow-net", "x"], importMap: "import_map.json" });
    expect(result).toEqual(EXITED);
    const [request] = extension.requestsOf("runWorkspaceScript");
    const runId = runIdOf(request!);
    expect(runId).toMatch(/^[A-Za-z0-9_-]{1,128}$/);
    expect(request?.payload).toEqual({
      sessionId: SESSION_ID,
      runId,
      access: "sandbox",
      timeoutMs: 60_000,
      entry: "scripts/report.ts",
      args: ["--allow-net", "x"],
      importMap: "import_map.json",
    });
    await session.workspace.run({ entry: "scripts/report.ts" });
    expect(runIdOf(extension.requestsOf("runWorkspaceScript")[1]!)).not.toBe(runId);
  });

  it("sends a source run with the access and timeout asked for", async () => {
    const { extension, session } = await openSession();
    extension.handle("runWorkspaceScript", () => ({ ...EXITED, access: "full", walls: [] }));
    const result = await session.workspace.run({ source: "console.log(1)", access: "full", timeoutMs: 5_000 });
    expect(result).toMatchObject({ access: "full", walls: [] });
    const payload = extension.requestsOf("runWorkspaceScript")[0]?.payload;
    expect(payload).toEqual({ sessionId: SESSION_ID, runId: expect.any(String), access: "full", timeoutMs: 5_000, source: "console.log(1)" });
  });

  it("resolves when the script exits non-zero or times out", async () => {
    const { extension, session } = await openSession();
    const failed = { ...EXITED, exitCode: 3, stdout: "", stderr: "error: Uncaught Error: boom\n", durationMs: 7 };
    extension.handle("runWorkspaceScript", () => failed);
    await expect(session.workspace.run({ source: "throw new Error('boom')" })).resolves.toEqual(failed);
    const timedOut = { ...EXITED, exitCode: null, signal: "SIGKILL", timedOut: true, termination: "timeout", durationMs: 1_000 };
    extension.handle("runWorkspaceScript", () => timedOut);
    await expect(session.workspace.run({ source: "for (;;) {}", timeoutMs: 1_000 })).resolves.toEqual(timedOut);
  });

  it("keeps the cleanup and capture diagnostics", async () => {
    const { extension, session } = await openSession();
    const diagnosed = { ...EXITED, processTreeCleanupError: "1 process left: sleep (pid 4242)", captureError: "stdout pipe closed" };
    extension.handle("runWorkspaceScript", () => diagnosed);
    await expect(session.workspace.run({ entry: "a.ts" })).resolves.toEqual(diagnosed);
  });

  it("rejects with the code of a refusal", async () => {
    const { extension, session } = await openSession();
    for (const code of [
      "DENO_ENTRY_INVALID",
      "DENO_IMPORT_MAP_INVALID",
      "DENO_UNAVAILABLE",
      "FULL_ACCESS_NOT_GRANTED",
      "DENO_MEMORY_LIMIT",
    ] as const) {
      extension.handle("runWorkspaceScript", () => {
        throw new PedelecError(code, `refused: ${code}`);
      });
      const error = await errorOf(session.workspace.run({ entry: "../outside.ts" }));
      expect([error.code, error.message]).toEqual([code, `refused: ${code}`]);
    }
  });

  it("refuses both or neither of entry and source, and other bad input, without sending anything", async () => {
    const { extension, session } = await openSession();
    const bad: unknown[] = [
      { entry: "a.ts", source: "console.log(1)" },
      {},
      undefined,
      { entry: "" },
      { entry: "a.ts", timeoutMs: 0 },
      { entry: "a.ts", timeoutMs: 1.5 },
      { entry: "a.ts", access: "root" },
      { entry: "a.ts", args: [1] },
      { entry: "a.ts", signal: "stop" },
    ];
    for (const options of bad) {
      const error = await errorOf(session.workspace.run(options as PedelecRunOptions));
      expect(error.code, JSON.stringify(options)).toBe("INVALID_INPUT");
    }
    expect((await errorOf(session.workspace.run(bad[0] as PedelecRunOptions))).message).toMatch(/exactly one of entry and source/);
    await flushMessages();
    expect(extension.requestsOf("runWorkspaceScript")).toEqual([]);
  });

  it("on abort sends cancelWorkspaceRun for that run and rejects with DENO_CANCELLED at once", async () => {
    const { extension, session } = await openSession();
    extension.handle("runWorkspaceScript", () => NO_REPLY);
    const controller = new AbortController();
    const running = session.workspace.run({ entry: "slow.ts", signal: controller.signal });
    const request = await extension.waitForRequest("runWorkspaceScript");
    controller.abort("the user pressed stop");
    const error = await errorOf(running);
    expect(error.code).toBe("DENO_CANCELLED");
    expect(error.details).toEqual({ reason: "the user pressed stop" });
    const cancel = await extension.waitForRequest("cancelWorkspaceRun");
    expect(cancel.payload).toEqual({ sessionId: SESSION_ID, runId: runIdOf(request) });
    // Core's own answer to the cancelled run, arriving later, changes nothing.
    extension.send({ id: request.id, ok: false, error: { code: "DENO_CANCELLED", message: "the run was cancelled" } });
    await flushMessages();
    expect(extension.requestsOf("cancelWorkspaceRun")).toHaveLength(1);
  });

  it("rejects an already-aborted run without sending anything", async () => {
    const { extension, session } = await openSession();
    const error = await errorOf(session.workspace.run({ entry: "a.ts", signal: AbortSignal.abort() }));
    expect(error.code).toBe("DENO_CANCELLED");
    await flushMessages();
    expect(extension.requests.map((request) => request.type)).toEqual(["createSession"]);
  });

  it("does not start a run aborted while the session resubscribes over a new port", async () => {
    const { extension, session } = await openSession();
    extension.dropPort();
    extension.handle("resumeSession", () => NO_REPLY);
    const controller = new AbortController();
    const running = session.workspace.run({ entry: "a.ts", signal: controller.signal });
    const resume = await extension.waitForRequest("resumeSession");
    controller.abort();
    expect((await errorOf(running)).code).toBe("DENO_CANCELLED");
    extension.send({ id: resume.id, ok: true, result: sessionInfo() });
    await flushMessages();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(extension.requests.map((request) => request.type)).toEqual(["createSession", "resumeSession"]);
  });

  it("rejects with SESSION_ENDED without sending once the session ended, and fails runs still pending at the end", async () => {
    const { extension, session } = await openSession();
    extension.handle("runWorkspaceScript", () => NO_REPLY);
    const pending = session.workspace.run({ entry: "slow.ts" });
    await extension.waitForRequest("runWorkspaceScript");
    await session.end();
    expect((await errorOf(pending)).code).toBe("SESSION_ENDED");
    expect((await errorOf(session.workspace.run({ entry: "a.ts" }))).code).toBe("SESSION_ENDED");
    await flushMessages();
    expect(extension.requestsOf("runWorkspaceScript")).toHaveLength(1);
  });

  it("rejects with SESSION_ENDED after Core ended the session", async () => {
    const { extension, session } = await openSession();
    extension.emit(SESSION_ID, { type: "session-ended", reason: "expired" });
    await vi.waitFor(() => expect(session.getStatus()).toBe("ended"));
    expect((await errorOf(session.workspace.run({ source: "1" }))).code).toBe("SESSION_ENDED");
    expect(extension.requestsOf("runWorkspaceScript")).toEqual([]);
  });

  it("rejects a result that does not match the protocol with SDK_PROTOCOL_ERROR", async () => {
    const { extension, session } = await openSession();
    const { walls: _walls, ...withoutWalls } = EXITED;
    for (const result of [withoutWalls, { ...EXITED, exitCode: "0" }, { ...EXITED, termination: "crashed" }, null]) {
      extension.handle("runWorkspaceScript", () => result);
      expect((await errorOf(session.workspace.run({ entry: "a.ts" }))).code, JSON.stringify(result)).toBe("SDK_PROTOCOL_ERROR");
    }
  });

  it("gives a run its timeout plus the bridge timeout before SDK_BRIDGE_TIMEOUT, then cancels it", async () => {
    const { extension, session } = await openSession({ bridgeTimeoutMs: 100 });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    extension.handle("runWorkspaceScript", () => NO_REPLY);
    let outcome: string | undefined;
    const running = session.workspace.run({ entry: "slow.ts", timeoutMs: 1_000 }).then(
      () => (outcome = "resolved"),
      (error: PedelecError) => (outcome = error.code),
    );
    const request = await extension.waitForRequest("runWorkspaceScript");
    // Far past the bridge timeout alone, the run is still awaited.
    await vi.advanceTimersByTimeAsync(1_099);
    expect(outcome).toBeUndefined();
    expect(extension.requestsOf("cancelWorkspaceRun")).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await running;
    expect(outcome).toBe("SDK_BRIDGE_TIMEOUT");
    const cancel = await extension.waitForRequest("cancelWorkspaceRun");
    expect(cancel.payload).toEqual({ sessionId: SESSION_ID, runId: runIdOf(request) });
  });

  it("leaves the default run timeout of 60 s to the script", async () => {
    const { extension, session } = await openSession({ bridgeTimeoutMs: 100 });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    extension.handle("runWorkspaceScript", () => NO_REPLY);
    let outcome: string | undefined;
    void session.workspace.run({ entry: "slow.ts" }).then(
      () => (outcome = "resolved"),
      (error: PedelecError) => (outcome = error.code),
    );
    const request = await extension.waitForRequest("runWorkspaceScript");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(outcome).toBeUndefined();
    extension.send({ id: request.id, ok: true, result: { ...EXITED, durationMs: 59_000 } });
    await vi.waitFor(() => expect(outcome).toBe("resolved"));
  });
});
