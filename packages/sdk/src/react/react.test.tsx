// @vitest-environment jsdom
import { act, cleanup, configure, render, waitFor } from "@testing-library/react";
import { StrictMode, useState, type ReactNode } from "react";
import { hydrateRoot } from "react-dom/client";
import { renderToString } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { defineTool } from "../define-tool.js";
import type { Pedelec } from "../pedelec.js";
import type { PedelecSession } from "../pedelec-session.js";
import { createPedelecTestKit, type PedelecTestKit } from "../testing-kit/index.js";
import { PedelecProvider, usePedelec, usePedelecSession, useTool } from "./index.js";
import type { SendOutcome, UsePedelecSessionOptions, UsePedelecSessionResult } from "./index.js";

const noteArgsSchema = { type: "object", properties: { title: { type: "string", minLength: 1 } }, required: ["title"] } as const;
const addNote = defineTool({ name: "add_note", description: "Add a note.", argsSchema: noteArgsSchema });
type NoteTools = readonly [typeof addNote];
type ChatOptions = UsePedelecSessionOptions<NoteTools>;
type NoteSession = PedelecSession<"add_note", { add_note: unknown }>;

// waitFor's deadline: generous, since a loaded machine may take a while; a passing wait returns as soon as it holds.
configure({ asyncUtilTimeout: 5_000 });

let kit: PedelecTestKit;
const unhandled: unknown[] = [];
const recordUnhandled = (reason: unknown): void => void unhandled.push(reason);

beforeEach(() => {
  kit = createPedelecTestKit({ waitTimeoutMs: 3_000 });
  unhandled.length = 0;
  process.on("unhandledRejection", recordUnhandled);
});

afterEach(async () => {
  cleanup();
  await kit.dispose();
  // Node reports a rejection nobody handled once the task that dropped it is over: give it two tasks.
  await nextTask();
  await nextTask();
  process.off("unhandledRejection", recordUnhandled);
  expect(unhandled).toEqual([]);
});

/** Resolves after the timers already due (a release after unmount is one) have fired: same-delay timers run in order. */
function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** What the test reads and drives: the hook's latest result, and every status it rendered, in order. */
interface Probe {
  readonly result: UsePedelecSessionResult<"add_note", { add_note: unknown }>;
  readonly statuses: string[];
  readonly renders: { count: number };
}

function newProbe(): Probe {
  const probe = { result: undefined as unknown as Probe["result"], statuses: [] as string[], renders: { count: 0 } };
  return probe;
}

function Chat({ probe, options, children }: { probe: Probe; options?: ChatOptions; children?: (session: NoteSession | null) => ReactNode }) {
  const result = usePedelecSession<NoteTools>({ skills: { guidance: "Keep notes.", tools: [addNote] }, ...options } as ChatOptions);
  (probe as { result: Probe["result"] }).result = result;
  probe.renders.count += 1;
  if (probe.statuses.at(-1) !== result.status) probe.statuses.push(result.status);
  return (
    <section>
      <p data-testid="status">{result.status}</p>
      <ol>
        {result.messages.map((message) => (
          <li key={message.id}>{message.text}</li>
        ))}
      </ol>
      {children?.(result.session)}
    </section>
  );
}

function renderChat(probe: Probe, options: { strict?: boolean; client?: Pedelec | null; chatOptions?: ChatOptions } = {}) {
  const client = options.client === null ? undefined : (options.client ?? kit.pedelec);
  const tree = (chatOptions?: ChatOptions, children?: (session: NoteSession | null) => ReactNode) => {
    const app = (
      <PedelecProvider client={client}>
        <Chat probe={probe} options={chatOptions}>
          {children}
        </Chat>
      </PedelecProvider>
    );
    return options.strict ? <StrictMode>{app}</StrictMode> : app;
  };
  const rendered = render(tree(options.chatOptions));
  return {
    ...rendered,
    rerenderWith: (chatOptions?: ChatOptions, children?: (session: NoteSession | null) => ReactNode) =>
      rendered.rerender(tree(chatOptions, children)),
  };
}

async function untilIdle(probe: Probe): Promise<NoteSession> {
  await waitFor(() => expect(probe.result.status).toBe("idle"));
  return probe.result.session!;
}

/** Starts a send outside React's act (it resolves when the turn is over) and returns its outcome promise. */
function startSend(probe: Probe, text: string): Promise<SendOutcome> {
  return probe.result.send(text);
}

describe("usePedelecSession under Strict Mode", () => {
  it("creates one session despite the double effects, and ends it on unmount", async () => {
    const probe = newProbe();
    const { unmount } = renderChat(probe, { strict: true });
    const session = await untilIdle(probe);
    expect(kit.requestsOf("createSession")).toHaveLength(1);
    expect(kit.sessions.map((info) => info.sessionId)).toEqual([session.sessionId]);
    expect(probe.statuses).toEqual(["inactive", "connecting", "idle"]);
    unmount();
    await waitFor(() => expect(kit.session(session.sessionId)?.status).toBe("ended"));
    expect(kit.requestsOf("endSession")).toHaveLength(1);
  });

  it("makes the provider's own client once, in the browser, and usePedelec() returns it", async () => {
    kit.installGlobalChrome();
    const connect = vi.spyOn(kit.runtime, "connect");
    const seen: Array<Pedelec | null> = [];
    function ClientProbe() {
      seen.push(usePedelec());
      return null;
    }
    const probe = newProbe();
    render(
      <StrictMode>
        <PedelecProvider options={{ bridgeTimeoutMs: 4_000 }}>
          <ClientProbe />
          <Chat probe={probe} />
        </PedelecProvider>
      </StrictMode>,
    );
    await untilIdle(probe);
    expect(connect).toHaveBeenCalledTimes(1);
    expect(kit.requestsOf("createSession")).toHaveLength(1);
    expect(seen[0]).toBeNull();
    const clients = new Set(seen.filter((client) => client !== null));
    expect(clients.size).toBe(1);
  });
});

describe("messages, activity, status and error", () => {
  it("joins the deltas of each message and replaces them with the completed message", async () => {
    const probe = newProbe();
    renderChat(probe);
    await untilIdle(probe);
    const sending = startSend(probe, "hi");
    const turn = await kit.agent.nextTurn();
    expect(turn.text).toBe("hi");
    turn.delta("Hel");
    turn.delta("lo");
    await waitFor(() =>
      expect(probe.result.messages.map(({ role, text, complete }) => ({ role, text, complete }))).toEqual([
        { role: "user", text: "hi", complete: true },
        { role: "assistant", text: "Hello", complete: false },
      ]),
    );
    const streamedId = probe.result.messages[1]!.id;
    turn.message("Hello there.");
    await waitFor(() => expect(probe.result.messages[1]).toEqual({ id: streamedId, role: "assistant", text: "Hello there.", complete: true }));
    turn.delta("Second ");
    turn.delta("one");
    await waitFor(() => expect(probe.result.messages[2]).toMatchObject({ role: "assistant", text: "Second one", complete: false }));
    turn.complete();
    await expect(sending).resolves.toEqual({ ok: true });
    expect(probe.result.messages.map(({ role, text, complete }) => [role, text, complete])).toEqual([
      ["user", "hi", true],
      ["assistant", "Hello there.", true],
      ["assistant", "Second one", true],
    ]);
    expect(new Set(probe.result.messages.map((message) => message.id)).size).toBe(3);
    expect(probe.result.error).toBeNull();
  });

  it("keeps each activity once, updated in place, and starts a new list with the next turn", async () => {
    const probe = newProbe();
    renderChat(probe);
    await untilIdle(probe);
    const first = startSend(probe, "test it");
    const turn = await kit.agent.nextTurn();
    const id = turn.activity({ kind: "command", status: "started", title: "npm test" });
    turn.activity("Reading files");
    await waitFor(() =>
      expect(probe.result.activity.map((item) => [item.title, item.status])).toEqual([
        ["npm test", "started"],
        ["Reading files", "completed"],
      ]),
    );
    turn.activity({ id, kind: "command", status: "completed", title: "npm test", detail: "12 passed" });
    await waitFor(() =>
      expect(probe.result.activity.map((item) => [item.title, item.status])).toEqual([
        ["npm test", "completed"],
        ["Reading files", "completed"],
      ]),
    );
    turn.complete("Done.");
    await expect(first).resolves.toEqual({ ok: true });
    const second = startSend(probe, "again");
    const next = await kit.agent.nextTurn();
    next.activity("Searching the web");
    await waitFor(() => expect(probe.result.activity.map((item) => item.title)).toEqual(["Searching the web"]));
    next.complete();
    await expect(second).resolves.toEqual({ ok: true });
  });

  it("shows the session's token usage, adding the turns up, and {} before any report", async () => {
    const probe = newProbe();
    renderChat(probe);
    await untilIdle(probe);
    expect(probe.result.usage).toEqual({});
    const first = startSend(probe, "count");
    const turn = await kit.agent.nextTurn();
    turn.usage({ inputTokens: 1_000, outputTokens: 10 });
    await waitFor(() => expect(probe.result.usage).toEqual({ inputTokens: 1_000, outputTokens: 10 }));
    turn.usage({ inputTokens: 1_000, outputTokens: 25 });
    turn.complete("Counted.");
    await expect(first).resolves.toEqual({ ok: true });
    await waitFor(() => expect(probe.result.usage).toEqual({ inputTokens: 1_000, outputTokens: 25 }));
    const second = startSend(probe, "again");
    const next = await kit.agent.nextTurn();
    next.usage({ inputTokens: 300, outputTokens: 5 });
    next.complete();
    await expect(second).resolves.toEqual({ ok: true });
    await waitFor(() => expect(probe.result.usage).toEqual({ inputTokens: 1_300, outputTokens: 30 }));
    expect(probe.result.usage).toBe(probe.result.session?.usage);
  });

  it("lists the files the agent wrote, the newest version of each last, and none before", async () => {
    const probe = newProbe();
    renderChat(probe);
    await untilIdle(probe);
    expect(probe.result.artifacts).toEqual([]);
    const first = startSend(probe, "draw");
    const turn = await kit.agent.nextTurn();
    turn.artifact({ path: "/chart.png", sizeBytes: 10, mediaType: "image/png" });
    turn.artifact({ path: "/notes.md", sizeBytes: 3, mediaType: "text/markdown" });
    turn.complete("Drawn.");
    await expect(first).resolves.toEqual({ ok: true });
    await waitFor(() => expect(probe.result.artifacts.map((artifact) => artifact.path)).toEqual(["/chart.png", "/notes.md"]));
    const second = startSend(probe, "again");
    const next = await kit.agent.nextTurn();
    next.artifact({ path: "/chart.png", sizeBytes: 20, mediaType: "image/png" });
    next.complete();
    await expect(second).resolves.toEqual({ ok: true });
    await waitFor(() =>
      expect(probe.result.artifacts.map((artifact) => [artifact.path, artifact.sizeBytes])).toEqual([
        ["/notes.md", 3],
        ["/chart.png", 20],
      ]),
    );
  });

  it("follows Core's status, shows a failed turn's error, and clears it with the next message", async () => {
    const probe = newProbe();
    renderChat(probe);
    await untilIdle(probe);
    const failing = startSend(probe, "break");
    const turn = await kit.agent.nextTurn();
    await waitFor(() => expect(probe.result.status).toBe("running"));
    turn.fail("PROVIDER_FAILED", "The agent crashed");
    const outcome = await failing;
    expect(outcome).toMatchObject({ ok: false, error: { code: "PROVIDER_FAILED", message: "The agent crashed" } });
    await waitFor(() => expect(probe.result.error?.code).toBe("PROVIDER_FAILED"));
    expect(probe.result.status).not.toBe("running");
    kit.agent.onTurn((next) => next.complete("Fine now."));
    const retry = startSend(probe, "again");
    await waitFor(() => expect(probe.result.error).toBeNull());
    await expect(retry).resolves.toEqual({ ok: true });
    expect(probe.statuses).toEqual(expect.arrayContaining(["inactive", "connecting", "idle", "running"]));
    expect(probe.result.status).toBe("idle");
  });

  it("shows a lost desktop runtime as an error of the running turn", async () => {
    const probe = newProbe();
    renderChat(probe);
    await untilIdle(probe);
    const sending = startSend(probe, "long job");
    await kit.agent.nextTurn();
    kit.loseCore();
    await expect(sending).resolves.toMatchObject({ ok: false, error: { code: "CORE_RUNTIME_UNAVAILABLE" } });
    await waitFor(() => expect(probe.result.error?.code).toBe("CORE_RUNTIME_UNAVAILABLE"));
    expect(probe.result.status).toBe("error");
  });

  it("reports a session that could not be created, also to send()", async () => {
    await kit.dispose();
    kit = createPedelecTestKit({ approval: "denied" });
    const probe = newProbe();
    renderChat(probe);
    await waitFor(() => expect(probe.result.status).toBe("error"));
    expect(probe.result.session).toBeNull();
    expect(probe.result.error?.code).toBe("APPROVAL_REJECTED");
    await expect(probe.result.send("anyone?")).resolves.toMatchObject({ ok: false, error: { code: "APPROVAL_REJECTED" } });
    expect(probe.result.messages).toEqual([]);
  });

  it("lets send() wait while the session is being created", async () => {
    await kit.dispose();
    kit = createPedelecTestKit({ approval: "pending" });
    kit.agent.onTurn((turn) => turn.complete(`You said: ${turn.text}`));
    const probe = newProbe();
    renderChat(probe);
    await kit.waitForApprovalPrompt();
    expect(probe.result.status).toBe("connecting");
    const early = startSend(probe, "early bird");
    kit.approve();
    await expect(early).resolves.toEqual({ ok: true });
    expect(probe.result.messages.map((message) => message.text)).toEqual(["early bird", "You said: early bird"]);
  });

  it("keeps a second message out while a turn runs (SESSION_BUSY), without adding it", async () => {
    const probe = newProbe();
    renderChat(probe);
    await untilIdle(probe);
    const first = startSend(probe, "one");
    const turn = await kit.agent.nextTurn();
    await expect(probe.result.send("two")).resolves.toMatchObject({ ok: false, error: { code: "SESSION_BUSY" } });
    await waitFor(() => expect(probe.result.messages.map((message) => message.text)).toEqual(["one"]));
    turn.complete("ok");
    await expect(first).resolves.toEqual({ ok: true });
  });

  it("cancel() stops the turn; the send reports TURN_CANCELLED, which is no error", async () => {
    const probe = newProbe();
    renderChat(probe);
    await untilIdle(probe);
    const sending = startSend(probe, "stop me");
    const turn = await kit.agent.nextTurn();
    turn.delta("Working");
    await waitFor(() => expect(probe.result.messages).toHaveLength(2));
    await act(() => probe.result.cancel());
    await expect(sending).resolves.toMatchObject({ ok: false, error: { code: "TURN_CANCELLED" } });
    await expect(turn.finished).resolves.toMatchObject({ ok: false, error: { code: "TURN_CANCELLED" } });
    await waitFor(() => expect(probe.result.status).toBe("idle"));
    expect(probe.result.error).toBeNull();
  });
});

describe("unmounting", () => {
  it("mid-turn: ends the session, stops the turn, settles send(), and leaves no unhandled rejection", async () => {
    const probe = newProbe();
    const { unmount } = renderChat(probe, { strict: true });
    const session = await untilIdle(probe);
    const sending = startSend(probe, "a long answer please");
    const turn = await kit.agent.nextTurn();
    turn.delta("Once upon");
    await waitFor(() => expect(probe.result.messages).toHaveLength(2));
    unmount();
    await expect(sending).resolves.toMatchObject({ ok: false, error: { code: "SESSION_ENDED" } });
    await expect(turn.finished).resolves.toMatchObject({ ok: false });
    await waitFor(() => expect(kit.session(session.sessionId)?.status).toBe("ended"));
    expect(turn.over).toBe(true);
  });

  it("while the user is still asked for approval: the session created afterwards is ended at once", async () => {
    await kit.dispose();
    kit = createPedelecTestKit({ approval: "pending" });
    const probe = newProbe();
    const { unmount } = renderChat(probe, { strict: true });
    await kit.waitForApprovalPrompt();
    unmount();
    // The release lets go one task after the unmount: createSession() is given up before the user answers.
    await nextTask();
    kit.approve();
    await kit.waitForRequest("endSession");
    await waitFor(() => expect(kit.sessions).toEqual([]));
    expect(kit.requestsOf("createSession")).toHaveLength(1);
  });
});

describe("options changes", () => {
  it("re-creates the session for a new provider, but not for new skills or a new options object", async () => {
    const probe = newProbe();
    const { rerenderWith } = renderChat(probe, { chatOptions: { provider: "claude" } });
    const first = await untilIdle(probe);
    rerenderWith({ provider: "claude", skills: { guidance: "Other guidance.", tools: [addNote] } });
    rerenderWith({ provider: "claude", effortLevel: undefined });
    await act(async () => {});
    expect(kit.requestsOf("createSession")).toHaveLength(1);
    expect(probe.result.session).toBe(first);
    rerenderWith({ provider: "codex" });
    await waitFor(() => expect(probe.result.session?.provider).toBe("codex"));
    await waitFor(() => expect(probe.result.status).toBe("idle"));
    expect(kit.requestsOf("createSession")).toHaveLength(2);
    expect(kit.session(first.sessionId)?.status).toBe("ended");
    expect(kit.sessions.map((info) => info.provider)).toEqual(["codex"]);
  });

  it("creates nothing while enabled is false, and ends the session when it turns false", async () => {
    const probe = newProbe();
    const { rerenderWith } = renderChat(probe, { chatOptions: { enabled: false } });
    await act(async () => {});
    expect(probe.result.status).toBe("inactive");
    expect(kit.requestsOf("createSession")).toHaveLength(0);
    rerenderWith({ enabled: true });
    const session = await untilIdle(probe);
    rerenderWith({ enabled: false });
    await waitFor(() => expect(kit.session(session.sessionId)?.status).toBe("ended"));
    expect(probe.result.status).toBe("inactive");
    expect(probe.result.session).toBeNull();
    await expect(probe.result.send("hello?")).resolves.toMatchObject({ ok: false, error: { code: "SEND_TEXT_FAILED" } });
  });
});

describe("tool handlers", () => {
  it("useTool runs the latest render's handler, and unregisters on unmount", async () => {
    function NoteTool({ session, label }: { session: NoteSession | null; label: string }) {
      useTool(session, "add_note", (args) => ({ label, title: (args as { title: string }).title }));
      return null;
    }
    const probe = newProbe();
    const { rerenderWith } = renderChat(probe);
    rerenderWith(undefined, (session) => <NoteTool session={session} label="first" />);
    await untilIdle(probe);
    const sending = startSend(probe, "take notes");
    const turn = await kit.agent.nextTurn();
    await expect(turn.callTool("add_note", { title: "a" })).resolves.toEqual({ label: "first", title: "a" });
    rerenderWith(undefined, (session) => <NoteTool session={session} label="second" />);
    await expect(turn.callTool("add_note", { title: "b" })).resolves.toEqual({ label: "second", title: "b" });
    rerenderWith(undefined, () => null);
    await expect(turn.callTool("add_note", { title: "c" })).rejects.toMatchObject({ code: "TOOL_HANDLER_NOT_FOUND" });
    turn.complete();
    await expect(sending).resolves.toEqual({ ok: true });
  });

  it("runs the latest render's inline handler of skills.tools, without creating the session again", async () => {
    function Counter({ probe }: { probe: Probe }) {
      const [count, setCount] = useState(0);
      const tools = [defineTool({ name: "add_note", description: "Add a note.", argsSchema: noteArgsSchema, handler: () => ({ count }) })] as const;
      return (
        <>
          <button type="button" onClick={() => setCount((value) => value + 1)}>
            more
          </button>
          <Chat probe={probe} options={{ skills: { guidance: `Count is ${count}.`, tools } }} />
        </>
      );
    }
    const probe = newProbe();
    const { getByRole } = render(
      <PedelecProvider client={kit.pedelec}>
        <Counter probe={probe} />
      </PedelecProvider>,
    );
    await untilIdle(probe);
    const sending = startSend(probe, "count");
    const turn = await kit.agent.nextTurn();
    await expect(turn.callTool("add_note", { title: "x" })).resolves.toEqual({ count: 0 });
    act(() => getByRole("button").click());
    act(() => getByRole("button").click());
    await expect(turn.callTool("add_note", { title: "y" })).resolves.toEqual({ count: 2 });
    turn.complete();
    await expect(sending).resolves.toEqual({ ok: true });
    expect(kit.requestsOf("createSession")).toHaveLength(1);
  });
});

describe("server rendering and hydration", () => {
  it("hydrates what the server rendered without a mismatch, then creates one session", async () => {
    const probe = newProbe();
    const app = (
      <StrictMode>
        <PedelecProvider client={kit.pedelec}>
          <Chat probe={probe} />
        </PedelecProvider>
      </StrictMode>
    );
    const html = renderToString(app);
    expect(html).toContain("inactive");
    expect(kit.requestsOf("createSession")).toHaveLength(0);
    const container = document.createElement("div");
    container.innerHTML = html;
    document.body.append(container);
    const recoverable: unknown[] = [];
    const root = await act(async () => hydrateRoot(container, app, { onRecoverableError: (error) => void recoverable.push(error) }));
    try {
      await untilIdle(probe);
      expect(recoverable).toEqual([]);
      expect(kit.requestsOf("createSession")).toHaveLength(1);
      expect(container.textContent).toContain("idle");
    } finally {
      act(() => root.unmount());
      container.remove();
    }
  });
});

describe("without a provider", () => {
  it("throws INVALID_INPUT naming the hook", () => {
    function Orphan() {
      usePedelecSession();
      return null;
    }
    const consoleError = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(() => render(<Orphan />)).toThrow(
        expect.objectContaining({ code: "INVALID_INPUT", message: expect.stringContaining("usePedelecSession()") }),
      );
    } finally {
      consoleError.mockRestore();
    }
  });
});
