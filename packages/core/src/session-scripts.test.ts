import { describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ScriptRunResult } from "@pedelec/protocol/script-run";
import type { ScriptRunner, ScriptRunRequest } from "@pedelec/script-runtime/script-runner";
import { MAX_CONCURRENT_RUNS, SessionScripts } from "./session-scripts.js";

function result(overrides: Partial<ScriptRunResult>): ScriptRunResult {
  return {
    exitCode: 0,
    signal: null,
    stdout: "",
    stderr: "",
    stdoutTruncated: false,
    stderrTruncated: false,
    timedOut: false,
    durationMs: 5,
    termination: "exited",
    access: "sandbox",
    walls: ["deno-permissions", "bubblewrap"],
    ...overrides,
  };
}

/** A runner whose runs end as `outcome` says, or when their signal aborts (then as a cancelled run does). */
function fakeRunner(outcome: (request: ScriptRunRequest) => ScriptRunResult | "until-aborted"): {
  runner: () => Promise<ScriptRunner>;
  requests: ScriptRunRequest[];
} {
  const requests: ScriptRunRequest[] = [];
  const runner = {
    run: (request: ScriptRunRequest) => {
      requests.push(request);
      const planned = outcome(request);
      if (planned !== "until-aborted") return Promise.resolve(planned);
      return new Promise<ScriptRunResult>((resolve) => {
        const cancelled = () => resolve(result({ exitCode: null, signal: "SIGKILL", termination: "cancelled" }));
        if (request.signal?.aborted) cancelled();
        request.signal?.addEventListener("abort", cancelled, { once: true });
      });
    },
  } as unknown as ScriptRunner;
  return { runner: async () => runner, requests };
}

const spec = { entry: "main.ts" };

describe("SessionScripts", () => {
  it("gives the page the result of a run that exited or timed out, and the runner the session's workspace and thread", async () => {
    const { runner, requests } = fakeRunner(() => result({ exitCode: 2, stdout: "out" }));
    const scripts = new SessionScripts({ threadId: "thread-1", workspaceRoot: "/ws", minFreeDiskBytes: async () => 0, runner });
    await expect(scripts.run({ runId: "r1", caller: "page", access: "sandbox", spec })).resolves.toMatchObject({ exitCode: 2, stdout: "out" });
    expect(requests[0]).toMatchObject({ runId: "r1", threadId: "thread-1", workspaceRoot: "/ws", access: "sandbox", entry: "main.ts" });
  });

  it("turns a run Pedelec stopped into a coded error for the page, and hands the agent the plain result", async () => {
    const memory = fakeRunner(() => result({ exitCode: null, signal: "SIGKILL", termination: "memory-limit" }));
    const page = new SessionScripts({ threadId: "thread-1", workspaceRoot: "/ws", minFreeDiskBytes: async () => 0, runner: memory.runner });
    await expect(page.run({ runId: "r1", caller: "page", access: "sandbox", spec })).rejects.toMatchObject({ code: "DENO_MEMORY_LIMIT" });
    await expect(page.run({ runId: "r2", caller: "agent", access: "sandbox", spec })).resolves.toMatchObject({ termination: "memory-limit" });
  });

  it("cancels one run with its reason, and refuses a second run under the same id while the first goes on", async () => {
    const { runner } = fakeRunner(() => "until-aborted");
    const scripts = new SessionScripts({ threadId: "thread-1", workspaceRoot: "/ws", minFreeDiskBytes: async () => 0, runner });
    const running = scripts.run({ runId: "r1", caller: "page", access: "sandbox", spec });
    await expect(scripts.run({ runId: "r1", caller: "page", access: "sandbox", spec })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(scripts.cancel("r1", new PedelecError("DENO_CANCELLED", "stop now"))).toBe(true);
    await expect(running).rejects.toMatchObject({ code: "DENO_CANCELLED", message: "stop now" });
    expect(scripts.cancel("r1", new PedelecError("DENO_CANCELLED", "again"))).toBe(false);
  });

  it(`refuses more than ${MAX_CONCURRENT_RUNS} runs at once with SESSION_BUSY`, async () => {
    const { runner } = fakeRunner(() => "until-aborted");
    const scripts = new SessionScripts({ threadId: "thread-1", workspaceRoot: "/ws", minFreeDiskBytes: async () => 0, runner });
    const runs = Array.from({ length: MAX_CONCURRENT_RUNS }, (_, index) =>
      scripts.run({ runId: `r${index}`, caller: "agent", access: "sandbox", spec }),
    );
    await expect(scripts.run({ runId: "one-more", caller: "agent", access: "sandbox", spec })).rejects.toMatchObject({ code: "SESSION_BUSY" });
    await scripts.close(new PedelecError("DENO_CANCELLED", "ended"));
    expect((await Promise.all(runs)).map((run) => run.termination)).toEqual(Array(MAX_CONCURRENT_RUNS).fill("cancelled"));
  });

  it("stops only the runs that match (the agent's on a cancelled turn, Full Access ones on revocation)", async () => {
    const { runner } = fakeRunner(() => "until-aborted");
    const scripts = new SessionScripts({ threadId: "thread-1", workspaceRoot: "/ws", minFreeDiskBytes: async () => 0, runner });
    const agentRun = scripts.run({ runId: "agent", caller: "agent", access: "sandbox", spec });
    const fullRun = scripts.run({ runId: "full", caller: "page", access: "full", spec }).catch((error: unknown) => error);
    await Promise.resolve();
    expect(scripts.stopWhere((run) => run.access === "full", new PedelecError("DENO_CANCELLED", "revoked"))).toBe(1);
    expect(await fullRun).toMatchObject({ code: "DENO_CANCELLED", message: "revoked" });
    expect(scripts.active).toBe(1);
    expect(scripts.stopWhere((run) => run.caller === "agent", new PedelecError("DENO_CANCELLED", "turn cancelled"))).toBe(1);
    await expect(agentRun).resolves.toMatchObject({ termination: "cancelled" });
  });

  it("waits on close until every run is gone, then refuses new runs with SESSION_ENDED", async () => {
    const { runner } = fakeRunner(() => "until-aborted");
    const scripts = new SessionScripts({ threadId: "thread-1", workspaceRoot: "/ws", minFreeDiskBytes: async () => 0, runner });
    const running = scripts.run({ runId: "r1", caller: "page", access: "sandbox", spec }).catch((error: unknown) => error);
    await Promise.resolve();
    await scripts.close(new PedelecError("DENO_CANCELLED", "session thread-1 ended"));
    expect(scripts.active).toBe(0);
    expect(await running).toMatchObject({ code: "DENO_CANCELLED", message: "session thread-1 ended" });
    await expect(scripts.run({ runId: "r2", caller: "page", access: "sandbox", spec })).rejects.toMatchObject({ code: "SESSION_ENDED" });
  });

  describe("the disk's free-space floor", () => {
    const GIB = 1024 ** 3;

    it("refuses a run on a disk already below the floor before the runner is asked, with the figures in the details", async () => {
      const { runner, requests } = fakeRunner(() => result({}));
      const scripts = new SessionScripts({
        threadId: "thread-1",
        workspaceRoot: "/ws",
        minFreeDiskBytes: async () => GIB,
        freeBytesOf: async () => GIB - 1,
        runner,
      });
      for (const caller of ["page", "agent"] as const) {
        const error = await scripts.run({ runId: `r-${caller}`, caller, access: "sandbox", spec }).catch((caught: unknown) => caught);
        expect(error).toMatchObject({
          code: "DISK_SPACE_LOW",
          details: { limit: GIB, free: GIB - 1, requested: 0, setting: "limits.minFreeDiskBytes" },
        });
      }
      expect(requests).toHaveLength(0);
      expect(scripts.active).toBe(0);
    });

    it("stops a run whose writes take the disk below the floor, and says so to the page and to the agent", async () => {
      for (const caller of ["page", "agent"] as const) {
        let free = 4 * GIB;
        const { runner, requests } = fakeRunner(() => "until-aborted");
        const scripts = new SessionScripts({
          threadId: "thread-1",
          workspaceRoot: "/ws",
          minFreeDiskBytes: async () => GIB,
          freeBytesOf: async () => free,
          freeSpacePollMs: 10,
          runner,
        });
        const running = scripts.run({ runId: "r1", caller, access: "sandbox", spec }).catch((caught: unknown) => caught);
        await expect.poll(() => requests.length).toBe(1);
        free = GIB / 2;
        expect(await running).toMatchObject({ code: "DISK_SPACE_LOW", details: { limit: GIB, free: GIB / 2 } });
        expect(scripts.active).toBe(0);
      }
    });

    it("leaves a run alone while the disk stays above the floor, and checks nothing with a floor of 0", async () => {
      const looked: string[] = [];
      const { runner } = fakeRunner(() => result({ stdout: "done" }));
      const watched = new SessionScripts({
        threadId: "t",
        workspaceRoot: "/ws",
        minFreeDiskBytes: async () => GIB,
        freeBytesOf: async (path) => {
          looked.push(path);
          return 2 * GIB;
        },
        runner,
      });
      await expect(watched.run({ runId: "r1", caller: "page", access: "sandbox", spec })).resolves.toMatchObject({ stdout: "done" });
      expect(looked).toEqual(["/ws"]);
      const unwatched = new SessionScripts({
        threadId: "t",
        workspaceRoot: "/ws",
        minFreeDiskBytes: async () => 0,
        freeBytesOf: async () => 0,
        runner,
      });
      await expect(unwatched.run({ runId: "r2", caller: "page", access: "sandbox", spec })).resolves.toMatchObject({ stdout: "done" });
    });
  });
});
