import { access } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { answerApproval, approvedSession, corePidOf, openSdkPage, setUpE2e, standInProcessesIn, type E2eEnvironment } from "./harness.js";
import { attempt, installRecorder, logOf } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

describe("the spine in real Chromium", () => {
  it("approve → create → stream → tool answered by the page → turn completes → second turn resumes", async () => {
    environment = await setUpE2e();
    expect((await environment.pedelec("status")).code).toBe(1);
    const { page, sessionId } = await approvedSession(environment);
    // The native host found no Core and started one for this PEDELEC_HOME.
    const status = await environment.pedelec("status");
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(environment.home);

    const approval = await attempt<{ approved: boolean; installed: boolean }>(page, "return await window.pedelec.getApprovalStatus();");
    expect(approval).toMatchObject({ ok: true, value: { installed: true, approved: true } });

    expect(await page.evaluate(() => (window as any).send("reply: Hello from the agent"))).toEqual({ ok: true });
    let log = await logOf(page);
    const deltas = log.filter((entry) => entry.kind === "delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((entry) => entry.delta).join("")).toBe("Hello from the agent");
    const seqs = deltas.map((entry) => entry.seq as number);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(log.filter((entry) => entry.kind === "chat").map((entry) => entry.text)).toEqual(["Hello from the agent"]);
    expect(log.filter((entry) => entry.kind === "status").map((entry) => entry.status)).toEqual(["running", "idle"]);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send('call-tool add_todo {"title":"Buy milk"}'))).toEqual({ ok: true });
    log = await logOf(page);
    expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([{ title: "Buy milk" }]);
    const statuses = log.filter((entry) => entry.kind === "status").map((entry) => entry.status);
    expect(statuses).toEqual(["running", "waiting_tool_result", "running", "idle"]);
    // The agent saw what the page's handler returned.
    const answer = log.filter((entry) => entry.kind === "chat").at(-1)?.text as string;
    expect(answer).toContain("Tool add_todo returned:");
    expect(answer).toContain('"id":"card-1"');
    expect(answer).toContain('"title":"Buy milk"');
    // Claude Code called the page's tool as its own MCP tool.
    expect(
      log.some((entry) => entry.kind === "activity" && entry.activity.kind === "tool" && entry.activity.title === "mcp__pedelec__add_todo"),
    ).toBe(true);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send("report-resume"))).toEqual({ ok: true });
    const resumed = (await logOf(page)).filter((entry) => entry.kind === "chat").at(-1)?.text as string;
    expect(resumed).toMatch(/^resumed=[0-9a-f-]{36}$/);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("delivers an answer larger than Chrome's 1 MiB native message limit whole", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page } = await approvedSession(environment);
    const length = 1_500_000;
    expect(await page.evaluate((size) => (window as any).send(`reply-large ${size}`), length)).toEqual({ ok: true });
    const received = await page.evaluate(() => {
      const log = (window as any).log as any[];
      return {
        chat: log.filter((entry) => entry.kind === "chat").map((entry) => entry.text as string),
        deltas: log
          .filter((entry) => entry.kind === "delta")
          .map((entry) => entry.delta as string)
          .join(""),
      };
    });
    expect(received.chat).toHaveLength(1);
    const text = received.chat[0]!;
    expect(text).toHaveLength(length);
    expect(new TextEncoder().encode(text).byteLength).toBeGreaterThan(1024 * 1024);
    // Every line numbers itself: any lost, repeated or reordered piece breaks the sequence.
    const lines = text.split("\n").slice(0, -1);
    lines.forEach((line, index) => {
      expect(line.slice(0, 7)).toBe(String(index).padStart(7, "0"));
    });
    expect(received.deltas).toBe(text);
  });

  it("rejects createSession when the user rejects the origin", async () => {
    environment = await setUpE2e();
    const page = await openSdkPage(environment);
    await installRecorder(page);
    const created = attempt(page, "return await window.create();");
    await answerApproval(environment.context, new URL(environment.server.url).origin, "reject");
    expect(await created).toMatchObject({ ok: false, code: "APPROVAL_REJECTED" });
    const approval = await attempt(page, "return await window.pedelec.getApprovalStatus();");
    expect(approval).toMatchObject({ ok: true, value: { approved: false } });
  });

  it("counts closing the approval popup without an answer as a rejection", async () => {
    environment = await setUpE2e();
    const page = await openSdkPage(environment);
    await installRecorder(page);
    const created = attempt(page, "return await window.create();");
    const popup = await environment.context.waitForEvent("page", {
      predicate: (candidate) => candidate.url().includes("/popup.html"),
      timeout: 15_000,
    });
    await popup.close();
    expect(await created).toMatchObject({ ok: false, code: "APPROVAL_REJECTED" });
  });

  it("does not let another origin resume a session, nor tell it that the session exists", async () => {
    environment = await setUpE2e();
    const { sessionId } = await approvedSession(environment);
    const other = await openSdkPage(environment, environment.otherOriginUrl);
    await installRecorder(other);
    const resumed = attempt(other, `return await window.resume(${JSON.stringify(sessionId)});`);
    await answerApproval(environment.context, new URL(environment.otherOriginUrl).origin, "approve");
    expect(await resumed).toMatchObject({ ok: false, code: "THREAD_NOT_FOUND" });
  });

  it("reports NATIVE_HOST_UNAVAILABLE when the host is not registered", async () => {
    environment = await setUpE2e({ installHost: false });
    const page = await openSdkPage(environment);
    await installRecorder(page);
    const created = attempt(page, "return await window.create();");
    await answerApproval(environment.context, new URL(environment.server.url).origin, "approve");
    expect(await created).toMatchObject({ ok: false, code: "NATIVE_HOST_UNAVAILABLE" });
  });

  it("sends TOOL_ARGS_INVALID to the agent without running the page's handler", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page } = await approvedSession(environment);
    expect(await page.evaluate(() => (window as any).send('call-tool add_todo {"title":""}'))).toEqual({ ok: true });
    const answer = (await logOf(page)).filter((entry) => entry.kind === "chat").at(-1)?.text as string;
    expect(answer).toContain("Tool add_todo failed:");
    expect(answer).toContain("TOOL_ARGS_INVALID");
    expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([]);
  });

  it("refuses a second sendText during a turn with SESSION_BUSY", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page } = await approvedSession(environment);
    const result = await page.evaluate(async () => {
      const w = window as any;
      const first = w.send("hang");
      const second = await w.send("reply: too soon");
      await w.session.end();
      return { second, first: await first };
    });
    expect(result.second).toMatchObject({ ok: false, code: "SESSION_BUSY" });
    expect(result.first).toMatchObject({ ok: false, code: "SESSION_ENDED" });
  });

  it("turns a provider that exits non-zero into an error event and a rejected turn", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page } = await approvedSession(environment);
    const result = await page.evaluate(() => (window as any).send("exit-with 3 model overloaded"));
    expect(result).toMatchObject({ ok: false, code: "PROVIDER_FAILED" });
    expect(result.message).toContain("model overloaded");
    const log = await logOf(page);
    expect(log).toContainEqual(expect.objectContaining({ kind: "error", code: "PROVIDER_FAILED" }));
    expect(log.filter((entry) => entry.kind === "status").at(-1)).toMatchObject({ status: "error" });
    // The session recovers: the next turn runs.
    expect(await page.evaluate(() => (window as any).send("reply: fine again"))).toEqual({ ok: true });
  });

  it("reports a signed-out claude as PROVIDER_NOT_AUTHENTICATED and unreadable output as PROVIDER_OUTPUT_INVALID", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page } = await approvedSession(environment);
    expect(await page.evaluate(() => (window as any).send("not-logged-in"))).toMatchObject({ ok: false, code: "PROVIDER_NOT_AUTHENTICATED" });
    expect(await page.evaluate(() => (window as any).send("garbage"))).toMatchObject({ ok: false, code: "PROVIDER_OUTPUT_INVALID" });
    const codes = (await logOf(page)).filter((entry) => entry.kind === "error").map((entry) => entry.code);
    expect(codes).toEqual(["PROVIDER_NOT_AUTHENTICATED", "PROVIDER_OUTPUT_INVALID"]);
  });

  it("fails the turn with CORE_RUNTIME_UNAVAILABLE when Core is killed mid-turn, instead of hanging", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page, workspace } = await approvedSession(environment);
    await page.evaluate(() => {
      const w = window as any;
      w.pendingTurn = w.send("hang");
    });
    // The agent is at work and has spoken (a CLI that is killed before its first write dies of EPIPE on its own).
    await expect
      .poll(
        () =>
          access(join(workspace.path, ".stand-in-hanging")).then(
            () => true,
            () => false,
          ),
        { timeout: 10_000 },
      )
      .toBe(true);
    const killedCore = await corePidOf(environment);
    process.kill(killedCore, "SIGKILL");
    const result = await page.evaluate(() => (window as any).pendingTurn);
    expect(result).toMatchObject({ ok: false, code: "CORE_RUNTIME_UNAVAILABLE" });
    const log = await logOf(page);
    expect(log).toContainEqual(expect.objectContaining({ kind: "error", code: "CORE_RUNTIME_UNAVAILABLE" }));
    expect(log.filter((entry) => entry.kind === "status").at(-1)).toMatchObject({ status: "error" });

    // The agent does not outlive Core: its process group is killed at once, with no new Core needed to reap it.
    await expect.poll(() => standInProcessesIn(environment!.home), { timeout: 10_000, interval: 50 }).toEqual([]);
    // The lock still names the killed Core: nobody started a new one to do the reaping.
    expect(await corePidOf(environment)).toBe(killedCore);
  });

  it("ends an autoEndOnDisconnect session when its last tab closes", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page, sessionId } = await approvedSession(environment);
    const second = await openSdkPage(environment);
    await installRecorder(second);
    expect(await attempt(second, `return await window.resume(${JSON.stringify(sessionId)});`)).toMatchObject({ ok: true });
    // Both tabs follow the session: a turn started in one streams into the other too.
    expect(await second.evaluate(() => (window as any).send("reply: seen by both"))).toEqual({ ok: true });
    await expect
      .poll(async () => (await logOf(page)).filter((entry) => entry.kind === "chat").map((entry) => entry.text), { timeout: 10_000 })
      .toEqual(["seen by both"]);

    await page.close();
    // One route is left, so the session lives on and still takes turns.
    expect(await second.evaluate(() => (window as any).send("reply: still here"))).toEqual({ ok: true });

    await second.close();
    const observer = await openSdkPage(environment);
    await installRecorder(observer);
    await expect
      .poll(
        async () => {
          const resumed = await attempt<{ status: string }>(observer, `return await window.resume(${JSON.stringify(sessionId)});`);
          return resumed.ok ? resumed.value.status : resumed.code;
        },
        { timeout: 10_000, interval: 100 },
      )
      .toBe("ended");
  });
});
