import { afterEach, describe, expect, it } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { defineTool } from "../define-tool.js";
import type { PedelecEventContext, ToolHandlerContext } from "../types.js";
import { errorOf } from "../testing/error-of.js";
import { createPedelecTestKit, type PedelecTestKit, type PedelecTestKitOptions, type ScriptedTurn } from "./index.js";

const kits: PedelecTestKit[] = [];
afterEach(async () => {
  await Promise.all(kits.splice(0).map((kit) => kit.dispose()));
});

function newKit(options?: PedelecTestKitOptions): PedelecTestKit {
  const kit = createPedelecTestKit(options);
  kits.push(kit);
  return kit;
}

const addNote = defineTool({
  name: "add_note",
  description: "Add a note.",
  argsSchema: {
    type: "object",
    properties: { title: { type: "string", minLength: 1 }, body: { type: "string" } },
    required: ["title"],
    additionalProperties: false,
  },
});

/** A promise and its resolve function, to learn from inside a callback that something happened. */
function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

function eventTypes(kit: PedelecTestKit, sessionId: string): string[] {
  return kit.events(sessionId).map(({ event }) => {
    if (event.type === "status-changed") return `status:${event.status}`;
    if (event.type === "tool-call-settled") return `tool-call-settled:${event.outcome}`;
    if (event.type === "turn-failed") return `turn-failed:${event.error.code}`;
    return event.type;
  });
}

describe("a tool round trip through the kit", () => {
  it("runs the page's handler once and gives its result to the agent, with Core's events in Core's order", async () => {
    const kit = newKit();
    const handled: Array<{ args: unknown; context: ToolHandlerContext }> = [];
    let agentGot: unknown;
    kit.agent.onTurn(async (turn) => {
      turn.delta("Hel");
      turn.delta("lo");
      agentGot = await turn.callTool("add_note", { title: "Milk" });
      turn.complete();
    });
    const session = await kit.pedelec.createSession({ skills: { guidance: "Keep notes.", tools: [addNote] } });
    session.onTool("add_note", (args, context) => {
      handled.push({ args, context });
      return { id: "n1" };
    });
    const deltas: string[] = [];
    const messages: string[] = [];
    session.onChatDelta((delta) => deltas.push(delta));
    session.onChat((message) => messages.push(message.text));

    await session.sendText("Add a note about milk");

    expect(agentGot).toEqual({ id: "n1" });
    expect(handled).toHaveLength(1);
    expect(handled[0]?.args).toEqual({ title: "Milk" });
    expect(deltas.join("")).toBe("Hello");
    expect(messages).toEqual(["Hello"]);
    expect(kit.toolCalls).toEqual([
      expect.objectContaining({
        toolName: "add_note",
        args: { title: "Milk" },
        outcome: "answered",
        claimedBy: "page-1",
        answer: { ok: true, result: { id: "n1" } },
        toolRequestId: handled[0]?.context.toolRequestId,
      }),
    ]);
    expect(eventTypes(kit, session.sessionId)).toEqual([
      "turn-started",
      "status:running",
      "chat-delta",
      "chat-delta",
      "tool-call-requested",
      "status:waiting_tool_result",
      "tool-call-settled:answered",
      "status:running",
      "chat-completed",
      "status:idle",
      "turn-completed",
    ]);
    expect(kit.events(session.sessionId).map((envelope) => envelope.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(session.getStatus()).toBe("idle");
    expect(session.lastSeq).toBe(11);
  });

  it("gives the scripted turn the page's prompt, guidance and tools, and marks the first turn", async () => {
    const kit = newKit();
    const seen: ScriptedTurn[] = [];
    kit.agent.onTurn((turn) => {
      seen.push(turn);
      turn.complete("ok");
    });
    const session = await kit.pedelec.createSession({ provider: "codex", skills: { guidance: "Keep notes.", tools: [addNote] } });
    await session.sendText("first");
    await session.sendText("second");
    expect(seen.map((turn) => [turn.text, turn.kind, turn.isFirstTurn])).toEqual([
      ["first", "user", true],
      ["second", "user", false],
    ]);
    expect(seen[0]?.guidance).toBe("Keep notes.");
    expect(seen[0]?.tools.map((tool) => tool.name)).toEqual(["add_note"]);
    expect(seen[0]?.session).toMatchObject({ sessionId: session.sessionId, provider: "codex", toolNames: ["add_note"] });
    expect(kit.requestsOf("sendText").map((request) => (request.payload as { text: string }).text)).toEqual(["first", "second"]);
  });

  it("refuses arguments that break the tool's schema with TOOL_ARGS_INVALID before the page sees the call, as the desktop does", async () => {
    const kit = newKit();
    let handlerRuns = 0;
    const refusals: PedelecError[] = [];
    kit.agent.onTurn(async (turn) => {
      for (const args of [{}, { title: "" }, { title: "x", colour: "red" }]) {
        refusals.push(await errorOf(turn.callTool("add_note", args)));
      }
      turn.complete();
    });
    const session = await kit.pedelec.createSession({ skills: { guidance: "", tools: [addNote] } });
    session.onTool("add_note", () => {
      handlerRuns += 1;
      return null;
    });
    await session.sendText("go");
    expect(refusals.map((error) => error.code)).toEqual(["TOOL_ARGS_INVALID", "TOOL_ARGS_INVALID", "TOOL_ARGS_INVALID"]);
    expect(refusals[0]?.message).toMatch(/add_note.*\(root\) must have property "title"/);
    expect(refusals[1]?.message).toMatch(/\/title must have at least 1 characters/);
    expect(refusals[2]?.message).toMatch(/\/colour must not have additional properties/);
    expect(handlerRuns).toBe(0);
    expect(eventTypes(kit, session.sessionId)).not.toContain("tool-call-requested");
    expect(kit.toolCalls).toEqual([]);
  });

  it("lets the page's own check answer TOOL_ARGS_INVALID when the desktop's check is skipped", async () => {
    const kit = newKit();
    let handlerRuns = 0;
    let refusal: PedelecError | undefined;
    kit.agent.onTurn(async (turn) => {
      refusal = await errorOf(turn.callTool("add_note", { title: 42 }, { checkArgs: false }));
      turn.complete();
    });
    const session = await kit.pedelec.createSession({
      skills: {
        guidance: "",
        tools: [
          {
            ...addNote,
            handler: () => {
              handlerRuns += 1;
              return null;
            },
          },
        ],
      },
    });
    await session.sendText("go");
    expect(refusal?.code).toBe("TOOL_ARGS_INVALID");
    expect(handlerRuns).toBe(0);
    expect(kit.toolCalls[0]).toMatchObject({ outcome: "answered", answer: { ok: false, error: { code: "TOOL_ARGS_INVALID" } } });
  });

  it("rejects the agent's call with the code the page answered: a throwing handler, a missing handler, an unknown tool", async () => {
    const kit = newKit();
    const codes: string[] = [];
    const quiet = defineTool({ name: "quiet", description: "No handler anywhere.", argsSchema: { type: "object" } });
    kit.agent.onTurn(async (turn) => {
      codes.push((await errorOf(turn.callTool("add_note", { title: "x" }))).code);
      codes.push((await errorOf(turn.callTool("quiet"))).code);
      codes.push((await errorOf(turn.callTool("no_such_tool"))).code);
      turn.complete();
    });
    const session = await kit.pedelec.createSession({ skills: { guidance: "", tools: [addNote, quiet] } });
    session.onTool("add_note", () => {
      throw new Error("disk full");
    });
    await session.sendText("go");
    expect(codes).toEqual(["TOOL_HANDLER_ERROR", "TOOL_HANDLER_NOT_FOUND", "TOOL_NOT_FOUND"]);
    expect(kit.toolCalls[0]?.answer).toMatchObject({ ok: false, error: { code: "TOOL_HANDLER_ERROR", message: expect.stringMatching(/disk full/) } });
  });

  it("rejects a call the page never answers with TOOL_TIMEOUT after the configured time, saying who held it", async () => {
    const kit = newKit({ toolTimeoutMs: 60 });
    const pageSignal = signal<AbortSignal>();
    let refusal: PedelecError | undefined;
    kit.agent.onTurn(async (turn) => {
      refusal = await errorOf(turn.callTool("add_note", { title: "x" }));
      turn.complete();
    });
    const session = await kit.pedelec.createSession({ skills: { guidance: "", tools: [addNote] } });
    session.onTool("add_note", (_args, context) => {
      pageSignal.resolve(context.signal);
      return new Promise(() => undefined);
    });
    const started = Date.now();
    await session.sendText("go");
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(refusal?.code).toBe("TOOL_TIMEOUT");
    expect(refusal?.message).toMatch(/add_note within 60 ms: page-1 claimed the call but never submitted a result/);
    expect((await pageSignal.promise).aborted).toBe(true);
    expect(kit.toolCalls[0]?.outcome).toBe("timed-out");
    expect(eventTypes(kit, session.sessionId)).toContain("tool-call-settled:timed-out");
  });
});

describe("turns that do not complete", () => {
  it("fails a turn with the code the agent gives: sendText rejects, onError reports it once, and the next turn runs", async () => {
    const kit = newKit();
    kit.agent.onTurn((turn) => {
      if (turn.text === "break") turn.fail("PROVIDER_FAILED", "the model crashed", { exitCode: 3 });
      else turn.complete("fine");
    });
    const session = await kit.pedelec.createSession();
    const errors: Array<[string, PedelecEventContext]> = [];
    session.onError((error, context) => errors.push([error.code, context]));
    const failure = await errorOf(session.sendText("break"));
    expect(failure).toMatchObject({ code: "PROVIDER_FAILED", message: "the model crashed", details: { exitCode: 3 } });
    expect(errors.map(([code, context]) => [code, context.source])).toEqual([["PROVIDER_FAILED", "core"]]);
    expect(session.getStatus()).toBe("error");
    await session.sendText("again");
    expect(session.getStatus()).toBe("idle");
    expect(eventTypes(kit, session.sessionId).slice(0, 4)).toEqual(["turn-started", "status:running", "status:error", "turn-failed:PROVIDER_FAILED"]);
  });

  it("fails the turn with PROVIDER_FAILED when the agent script throws, and with the thrown PedelecError's code", async () => {
    const kit = newKit();
    kit.agent.onTurn((turn) => {
      if (turn.text === "plain") throw new Error("script bug");
      throw new PedelecError("PROVIDER_NOT_AUTHENTICATED", "run codex login");
    });
    const session = await kit.pedelec.createSession();
    expect(await errorOf(session.sendText("plain"))).toMatchObject({ code: "PROVIDER_FAILED", message: "the agent script threw: script bug" });
    expect(await errorOf(session.sendText("coded"))).toMatchObject({ code: "PROVIDER_NOT_AUTHENTICATED", message: "run codex login" });
  });

  it("cancels a turn waiting on a tool: sendText rejects with TURN_CANCELLED, no error event, the agent and the handler are stopped", async () => {
    const kit = newKit();
    const session = await kit.pedelec.createSession({ skills: { guidance: "", tools: [addNote] } });
    const handlerSignal = signal<AbortSignal>();
    session.onTool("add_note", (_args, context) => {
      handlerSignal.resolve(context.signal);
      return new Promise(() => undefined);
    });
    const errors: string[] = [];
    session.onError((error) => errors.push(error.code));
    const sending = session.sendText("long job");
    const turn = await kit.agent.nextTurn();
    turn.delta("Working");
    const calling = turn.callTool("add_note", { title: "x" });
    await handlerSignal.promise;

    await session.cancel();

    expect((await errorOf(sending)).code).toBe("TURN_CANCELLED");
    expect((await errorOf(calling)).code).toBe("TURN_CANCELLED");
    expect(await turn.finished).toMatchObject({ ok: false, error: { code: "TURN_CANCELLED" } });
    expect(turn.signal.aborted).toBe(true);
    expect((await handlerSignal.promise).aborted).toBe(true);
    expect(errors).toEqual([]);
    expect(session.getStatus()).toBe("idle");
    expect(eventTypes(kit, session.sessionId).slice(-3)).toEqual(["tool-call-settled:cancelled", "status:idle", "turn-failed:TURN_CANCELLED"]);
    // A stopped turn ignores its script, as the desktop ignores a provider it killed.
    turn.complete("too late");
    expect(eventTypes(kit, session.sessionId).at(-1)).toBe("turn-failed:TURN_CANCELLED");
  });

  it("ends a session during a turn: sendText rejects with SESSION_ENDED and Core's end events follow", async () => {
    const kit = newKit();
    const session = await kit.pedelec.createSession();
    const ended: Array<string | undefined> = [];
    session.onEnded((context) => ended.push(context.endReason));
    const sending = session.sendText("hi");
    const turn = await kit.agent.nextTurn();
    await session.end();
    expect((await errorOf(sending)).code).toBe("SESSION_ENDED");
    expect(turn.over).toBe(true);
    expect(ended).toEqual(["requested"]);
    expect(kit.session(session.sessionId)?.status).toBe("ended");
    expect(kit.sessions).toEqual([]);
    expect(eventTypes(kit, session.sessionId).slice(-3)).toEqual(["turn-failed:SESSION_ENDED", "status:ended", "session-ended"]);
  });

  it("fails a turn no script takes with PROVIDER_FAILED after the idle deadline, naming the fix", async () => {
    const kit = newKit({ agentIdleTimeoutMs: 40 });
    const session = await kit.pedelec.createSession();
    const failure = await errorOf(session.sendText("anyone?"));
    expect(failure.code).toBe("PROVIDER_FAILED");
    expect(failure.message).toMatch(/kit\.agent\.onTurn|kit\.agent\.nextTurn/);
  });

  it("rejects nextTurn() after its deadline when no turn starts", async () => {
    const kit = newKit();
    await expect(kit.agent.nextTurn({ timeoutMs: 30 })).rejects.toThrow(/no turn started within 30 ms/);
  });
});

describe("the desktop runtime going away", () => {
  it("fails the running turn with CORE_RUNTIME_UNAVAILABLE, reports it once, and works again after restoreCore()", async () => {
    const kit = newKit();
    const session = await kit.pedelec.createSession();
    const errors: Array<[string, string]> = [];
    const statuses: string[] = [];
    session.onError((error, context) => errors.push([error.code, context.source]));
    session.onStatus((status) => statuses.push(status));
    const sending = session.sendText("hi");
    const turn = await kit.agent.nextTurn();
    turn.delta("Partial");

    kit.loseCore();

    expect((await errorOf(sending)).code).toBe("CORE_RUNTIME_UNAVAILABLE");
    expect(turn.signal.aborted).toBe(true);
    expect(errors).toEqual([["CORE_RUNTIME_UNAVAILABLE", "sdk"]]);
    expect(session.getStatus()).toBe("error");
    expect(kit.coreAvailable).toBe(false);
    expect((await errorOf(session.sendText("while down"))).code).toBe("CORE_RUNTIME_UNAVAILABLE");
    const availability = await kit.pedelec.checkAvailability();
    expect(availability).toMatchObject({ available: false, extension: { available: true }, desktop: { available: false } });
    expect(availability.error?.code).toBe("CORE_RUNTIME_UNAVAILABLE");
    expect((await kit.pedelec.getApprovalStatus()).appConnected).toBe(false);

    kit.restoreCore();
    kit.agent.onTurn((next) => next.complete("back"));
    await session.sendText("again");

    // The restarted desktop fails the lost turn itself; the page had reported it already and does not again.
    expect(eventTypes(kit, session.sessionId)).toContain("turn-failed:SESSION_ERROR");
    expect(kit.events(session.sessionId).find(({ event }) => event.type === "turn-failed")?.event).toMatchObject({
      turnId: turn.turnId,
      error: { code: "SESSION_ERROR", details: { cause: "core-stopped" } },
    });
    expect(errors).toEqual([["CORE_RUNTIME_UNAVAILABLE", "sdk"]]);
    expect(session.getStatus()).toBe("idle");
    expect(statuses.at(-1)).toBe("idle");
  });

  it("on a clean stop, fails the turn with SESSION_ERROR before the link goes", async () => {
    const kit = newKit();
    const session = await kit.pedelec.createSession();
    const sending = session.sendText("hi");
    await kit.agent.nextTurn();
    kit.loseCore({ how: "stopped" });
    expect((await errorOf(sending)).code).toBe("SESSION_ERROR");
    expect(eventTypes(kit, session.sessionId).slice(-2)).toEqual(["status:error", "turn-failed:SESSION_ERROR"]);
  });
});

describe("resume and replay", () => {
  it("replays the events after afterSeq to a resuming page, once, and nothing without afterSeq", async () => {
    const kit = newKit();
    kit.agent.onTurn((turn) => {
      turn.delta(`${turn.text} `);
      turn.delta("answered");
      turn.complete();
    });
    const session = await kit.pedelec.createSession({ autoEndOnDisconnect: false });
    await session.sendText("first");
    const afterFirst = session.lastSeq;
    await session.sendText("second");

    const reloaded = kit.createClient();
    const resumed = await reloaded.resumeSession(session.sessionId, { afterSeq: afterFirst });
    const replayed: Array<[string, number | undefined]> = [];
    resumed.onChat((message, context) => replayed.push([message.text, context.seq]));
    const fresh = await kit.createClient().resumeSession(session.sessionId);
    const freshChat: string[] = [];
    fresh.onChat((message) => freshChat.push(message.text));

    await expect.poll(() => replayed.length, { timeout: 1_000 }).toBe(1);
    expect(replayed[0]?.[0]).toBe("second answered");
    expect(replayed[0]?.[1]).toBeGreaterThan(afterFirst);
    expect(resumed.lastSeq).toBe(session.lastSeq);

    // Live events reach every page following the session; the replayed ones are not repeated.
    kit.agent.onTurn((turn) => turn.complete("third answered"));
    const live: string[] = [];
    resumed.onChat((message) => live.push(message.text));
    await session.sendText("third");
    await expect.poll(() => live, { timeout: 1_000 }).toEqual(["third answered"]);
    expect(replayed.map(([text]) => text)).toEqual(["second answered", "third answered"]);
    expect(freshChat).toEqual(["third answered"]);
  });

  it("resumes a turn that is running: the page follows it to its end", async () => {
    const kit = newKit();
    const session = await kit.pedelec.createSession({ autoEndOnDisconnect: false });
    const sending = session.sendText("long");
    const turn = await kit.agent.nextTurn();
    const other = await kit.createClient().resumeSession(session.sessionId);
    const chat: string[] = [];
    other.onChat((message) => chat.push(message.text));
    expect(kit.session(session.sessionId)?.activeTurn).toEqual({ turnId: turn.turnId, turnKind: "user" });
    turn.complete("done");
    await sending;
    await expect.poll(() => chat, { timeout: 1_000 }).toEqual(["done"]);
    expect(other.getStatus()).toBe("idle");
  });

  it("answers THREAD_NOT_FOUND for a session it does not know", async () => {
    const kit = newKit();
    expect((await errorOf(kit.pedelec.resumeSession("unknown-session"))).code).toBe("THREAD_NOT_FOUND");
  });
});

describe("two pages on one kit", () => {
  it("runs each tool call in exactly one page, and hands it to the other when the holder's tab closes", async () => {
    const kit = newKit();
    const first = kit.pedelec;
    const second = kit.createClient();
    const session = await first.createSession({ skills: { guidance: "", tools: [addNote] } });
    const resumed = await second.resumeSession<"add_note">(session.sessionId);
    const runs: string[] = [];
    const firstStarted = signal();
    session.onTool("add_note", () => {
      runs.push("page-1");
      firstStarted.resolve();
      return new Promise(() => undefined);
    });
    resumed.onTool("add_note", (args) => {
      runs.push("page-2");
      return { savedBy: "page-2", args };
    });
    let result: unknown;
    kit.agent.onTurn(async (turn) => {
      result = await turn.callTool("add_note", { title: "x" });
      turn.complete();
    });
    const followerDone = signal();
    resumed.onStatus((status) => {
      if (status === "idle") followerDone.resolve();
    });

    void session.sendText("go").catch(() => undefined);
    await firstStarted.promise;
    expect(kit.toolCalls[0]?.claimedBy).toBe("page-1");
    kit.closePage(first);
    await followerDone.promise;

    expect(runs).toEqual(["page-1", "page-2"]);
    expect(result).toEqual({ savedBy: "page-2", args: { title: "x" } });
    expect(kit.toolCalls).toHaveLength(1);
    expect(kit.toolCalls[0]).toMatchObject({ outcome: "answered", claimedBy: "page-2" });
    // Requested twice (the second time for the pages still there), settled once.
    expect(eventTypes(kit, session.sessionId).filter((type) => type.startsWith("tool-call"))).toEqual([
      "tool-call-requested",
      "tool-call-requested",
      "tool-call-settled:answered",
    ]);
    // The session lives on: a page still follows it.
    expect(kit.session(session.sessionId)?.status).toBe("idle");
  });

  it("runs a call once when both pages have a handler and both claim it", async () => {
    const kit = newKit();
    const session = await kit.pedelec.createSession({ skills: { guidance: "", tools: [addNote] } });
    const resumed = await kit.createClient({ name: "tab-2" }).resumeSession<"add_note">(session.sessionId);
    const runs: string[] = [];
    session.onTool("add_note", () => runs.push("page-1"));
    resumed.onTool("add_note", () => runs.push("tab-2"));
    const secondPageFollows = signal();
    resumed.onStatus((status) => {
      if (status === "running") secondPageFollows.resolve();
    });
    const sending = session.sendText("go");
    const turn = await kit.agent.nextTurn();
    await secondPageFollows.promise;
    await turn.callTool("add_note", { title: "a" });
    await turn.callTool("add_note", { title: "b" });
    turn.complete();
    await sending;
    expect(runs).toHaveLength(2);
    expect(kit.toolCalls.map((call) => call.outcome)).toEqual(["answered", "answered"]);
    // Both pages asked for each call; one was refused each time, and one result came back per call.
    const claims = kit.requestsOf("claimToolCall");
    expect(claims.map((claim) => claim.page).sort()).toEqual(["page-1", "page-1", "tab-2", "tab-2"]);
    expect(kit.requestsOf("submitToolResult")).toHaveLength(2);
  });

  it("ends a session whose last page closed (autoEndOnDisconnect)", async () => {
    const kit = newKit();
    const session = await kit.pedelec.createSession();
    kit.closePage(kit.pedelec);
    await expect.poll(() => kit.session(session.sessionId)?.status, { timeout: 1_000 }).toBe("ended");
    expect(kit.events(session.sessionId).at(-1)?.event).toEqual({ type: "session-ended", reason: "disconnected" });
    // The closed tab's client reaches nothing any more.
    expect((await errorOf(kit.pedelec.createSession())).code).toBe("EXTENSION_DISCONNECTED");
    expect((await errorOf(kit.pedelec.createSession())).code).toBe("EXTENSION_UNAVAILABLE");
    expect(kit.requestsOf("createSession")).toHaveLength(1);
  });
});

describe("approval, providers and settings", () => {
  it("holds createSession while approval is pending (the bridge timeout paused) until the user approves", async () => {
    const kit = newKit({ approval: "pending", bridgeTimeoutMs: 40, waitTimeoutMs: 1_000 });
    expect(await kit.pedelec.getApprovalStatus()).toMatchObject({ installed: true, approved: false, origin: "https://app.test" });
    const creating = kit.pedelec.createSession();
    await kit.waitForApprovalPrompt();
    // Longer than the bridge timeout: the SDK must not give up while the user decides.
    await new Promise((resolve) => setTimeout(resolve, 120));
    kit.approve();
    const session = await creating;
    expect(session.sessionId).toMatch(/^session-/);
    expect((await kit.pedelec.getApprovalStatus()).approved).toBe(true);
  });

  it("rejects with APPROVAL_REJECTED when the user denies, and CREATE_SESSION_NOT_APPROVED for other requests", async () => {
    const kit = newKit({ approval: "pending" });
    const creating = kit.pedelec.createSession();
    await kit.waitForApprovalPrompt();
    kit.deny();
    expect((await errorOf(creating)).code).toBe("APPROVAL_REJECTED");
    expect((await errorOf(kit.pedelec.createSession())).code).toBe("APPROVAL_REJECTED");
    expect((await errorOf(kit.pedelec.listProviders())).code).toBe("CREATE_SESSION_NOT_APPROVED");
  });

  it("times a pending approval out with APPROVAL_TIMEOUT after the kit's wait deadline", async () => {
    const kit = newKit({ approval: "pending", waitTimeoutMs: 40 });
    expect((await errorOf(kit.pedelec.createSession())).code).toBe("APPROVAL_TIMEOUT");
  });

  it("reports provider availability and refuses sessions on unavailable providers with the desktop's codes", async () => {
    const kit = newKit({ providers: { codex: "Codex is not signed in — run `codex login`", ollama: false } });
    const providers = await kit.pedelec.listProviders();
    expect(providers).toHaveLength(6);
    expect(providers.find((provider) => provider.code === "codex")).toEqual({
      code: "codex",
      name: "Codex",
      available: false,
      error: "Codex is not signed in — run `codex login`",
    });
    expect(providers.find((provider) => provider.code === "claude")).toMatchObject({ available: true, error: null });
    const refused = await errorOf(kit.pedelec.createSession({ provider: "codex" }));
    expect(refused).toMatchObject({ code: "PROVIDER_UNAVAILABLE", message: "Codex is not signed in — run `codex login`" });
    expect((await errorOf(kit.pedelec.createSession({ provider: "ollama" }))).code).toBe("MODEL_REQUIRED");
    kit.setProviders({ claude: false });
    expect((await errorOf(kit.pedelec.createSession())).code).toBe("DEFAULT_PROVIDER_UNAVAILABLE");
    expect((await errorOf(kit.pedelec.createSession({ access: "full", provider: "codex" }))).code).toBe("FULL_ACCESS_NOT_GRANTED");
  });

  it("uses the desktop's settings for defaults", async () => {
    const kit = newKit({ settings: { defaultProvider: "opencode", defaultEffortLevel: "high", defaultModels: { opencode: "big" } } });
    expect(await kit.pedelec.getSettings()).toEqual({ defaultProvider: "opencode", defaultEffortLevel: "high", defaultModels: { opencode: "big" } });
    const session = await kit.pedelec.createSession();
    expect([session.provider, session.effortLevel, session.model]).toEqual(["opencode", "high", "big"]);
    // An explicit effort takes the profile's place, and a level the provider lacks is refused as Core refuses it.
    const explicit = await kit.pedelec.createSession({ provider: "codex", model: "gpt-5.5", effort: "xhigh" });
    expect([explicit.effortLevel, explicit.effort, explicit.model]).toEqual([undefined, "xhigh", "gpt-5.5"]);
    expect(await errorOf(kit.pedelec.createSession({ provider: "codex", model: "gpt-5.5", effort: "max" }))).toMatchObject({
      code: "EFFORT_NOT_SUPPORTED",
      details: { provider: "codex", effort: "max", supported: ["low", "medium", "high", "xhigh"] },
    });
    expect((await errorOf(kit.pedelec.createSession({ provider: "cursor", model: "auto", effort: "low" }))).code).toBe("EFFORT_NOT_SUPPORTED");
    const none = newKit({ settings: { defaultProvider: null } });
    expect((await errorOf(none.pedelec.createSession())).code).toBe("DEFAULT_PROVIDER_NOT_SET");
  });
});

describe("prepare()", () => {
  it("runs a hidden prepare turn once; its chat never reaches the page's chat callbacks", async () => {
    const kit = newKit();
    const kinds: string[] = [];
    kit.agent.onTurn((turn) => {
      kinds.push(turn.kind);
      turn.complete(turn.kind === "prepare" ? "Ready." : "Hi");
    });
    const session = await kit.pedelec.createSession();
    const chat: string[] = [];
    session.onChat((message) => chat.push(message.text));
    await session.prepare();
    await session.sendText("hello");
    const preparedAgain = session.prepare();
    await preparedAgain;
    expect(kinds).toEqual(["prepare", "user"]);
    expect(chat).toEqual(["Hi"]);
    expect(kit.requestsOf("prepareSession")).toHaveLength(1);
  });

  it("completes prepare turns by itself when no script is registered, and prepares nothing when told not to", async () => {
    const kit = newKit();
    const session = await kit.pedelec.createSession();
    await session.prepare();
    expect(eventTypes(kit, session.sessionId).at(-1)).toBe("turn-completed");
    const fresh = newKit({ prepareTurns: false });
    const other = await fresh.pedelec.createSession();
    await other.prepare();
    expect(fresh.events(other.sessionId)).toEqual([]);
  });
});

describe("what the kit sends stays within the protocol", () => {
  it("refuses events that would break it: an unknown error code, a non-string delta, arguments that are not JSON", async () => {
    const kit = newKit();
    const problems: unknown[] = [];
    kit.agent.onTurn(async (turn) => {
      for (const attempt of [
        () => turn.fail("NOT_A_CODE" as ErrorCode),
        () => turn.delta(42 as unknown as string),
        () => turn.callTool("add_note", { title: "x", big: 10n }, { checkArgs: false }),
      ]) {
        try {
          await attempt();
        } catch (error) {
          problems.push(error);
        }
      }
      turn.complete();
    });
    const session = await kit.pedelec.createSession({ skills: { guidance: "", tools: [addNote] } });
    await session.sendText("go");
    expect(problems).toHaveLength(3);
    expect(String(problems[0])).toMatch(/error code from the catalogue/);
    expect(String(problems[1])).toMatch(/takes a string/);
    expect(String(problems[2])).toMatch(/breaks the protocol/);
    expect(eventTypes(kit, session.sessionId)).not.toContain("tool-call-requested");
  });

  it("answers SDK_PROTOCOL_ERROR when a test's onRequest handler returns what the protocol does not allow", async () => {
    const kit = newKit();
    kit.onRequest("listProviders", () => [{ code: "nope" }] as never);
    const failure = await errorOf(kit.pedelec.listProviders());
    expect(failure.code).toBe("SDK_PROTOCOL_ERROR");
    expect(failure.message).toMatch(/kit\.onRequest\("listProviders"\) handler/);
    kit.onRequest("listProviders", () => {
      throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", "down for the test");
    });
    expect(await errorOf(kit.pedelec.listProviders())).toMatchObject({ code: "CORE_RUNTIME_UNAVAILABLE", message: "down for the test" });
  });

  it("patches no global: the client is wired to the stand-in directly", async () => {
    const kit = newKit();
    kit.agent.onTurn((turn) => turn.complete("hi"));
    const session = await kit.pedelec.createSession();
    await session.sendText("hello");
    expect((globalThis as { chrome?: unknown }).chrome).toBeUndefined();
  });
});

describe("the kit's per-origin limit", () => {
  it("refuses a 51st live session of the page's origin as Core does, and gives the slot back when one ends", async () => {
    const kit = newKit();
    const sessions = await Promise.all(Array.from({ length: 50 }, () => kit.pedelec.createSession({ provider: "claude" })));
    const refused = await errorOf(kit.pedelec.createSession({ provider: "claude" }));
    expect(refused).toMatchObject({
      code: "SESSION_LIMIT_REACHED",
      details: { limit: 50, used: 50, requested: 1, scope: "origin", setting: "limits.liveSessionsPerOrigin" },
    });
    await sessions[0]!.end();
    await expect(kit.pedelec.createSession({ provider: "claude" })).resolves.toBeDefined();
  });
});
