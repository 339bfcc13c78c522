import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { defineTool } from "./define-tool.js";
import { Pedelec } from "./pedelec.js";
import { errorOf } from "./testing/error-of.js";
import { FakeExtension, NO_REPLY, TEST_ORIGIN, sessionInfo } from "./testing/fake-extension.js";

const argsSchema = { type: "object", properties: { title: { type: "string" } }, required: ["title"] } as const;

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("Pedelec outside a page with the extension", () => {
  it("constructs on a server and rejects every call with EXTENSION_UNAVAILABLE", async () => {
    const pedelec = new Pedelec();
    expect((await errorOf(pedelec.createSession())).code).toBe("EXTENSION_UNAVAILABLE");
    expect((await errorOf(pedelec.resumeSession("session-0001"))).code).toBe("EXTENSION_UNAVAILABLE");
    expect((await errorOf(pedelec.request("getApprovalStatus", {}))).code).toBe("EXTENSION_UNAVAILABLE");
    await expect(pedelec.getApprovalStatus()).resolves.toEqual({
      installed: false,
      approved: false,
      origin: "",
      appConnected: false,
      appLaunched: false,
    });
  });

  it("reports installed:false with the page origin when chrome.runtime.connect is missing", async () => {
    vi.stubGlobal("window", globalThis);
    vi.stubGlobal("location", { origin: TEST_ORIGIN });
    const pedelec = new Pedelec();
    await expect(pedelec.getApprovalStatus()).resolves.toEqual({
      installed: false,
      approved: false,
      origin: TEST_ORIGIN,
      appConnected: false,
      appLaunched: false,
    });
  });

  it("reports installed:false when the extension is absent", async () => {
    const extension = new FakeExtension().install();
    extension.absent = true;
    const pedelec = new Pedelec();
    await expect(pedelec.getApprovalStatus()).resolves.toMatchObject({ installed: false, origin: TEST_ORIGIN });
    expect((await errorOf(pedelec.createSession())).code).toBe("EXTENSION_UNAVAILABLE");
  });
});

describe("Pedelec", () => {
  it("connects to the default extension id at construction, or to the given one", () => {
    const extension = new FakeExtension().install();
    new Pedelec();
    new Pedelec({ extensionId: "abcdefghijklmnopabcdefghijklmnop" });
    expect(extension.connections.map((connection) => connection.extensionId)).toEqual([DEFAULT_EXTENSION_ID, "abcdefghijklmnopabcdefghijklmnop"]);
  });

  it("returns the extension's approval status", async () => {
    new FakeExtension().install();
    await expect(new Pedelec().getApprovalStatus()).resolves.toEqual({
      installed: true,
      approved: true,
      origin: TEST_ORIGIN,
      appConnected: true,
      appLaunched: false,
    });
  });

  it("lists providers and reads the defaults through the extension, checking both answers", async () => {
    const extension = new FakeExtension().install();
    const providers = [
      { code: "claude", name: "Claude Code", available: true, error: null },
      { code: "codex", name: "Codex", available: false, error: "codex is not installed or not on PATH" },
    ];
    extension.handle("listProviders", () => providers);
    extension.handle("getSettings", () => ({ defaultProvider: "claude", defaultEffortLevel: "high", defaultModels: { claude: "opus" } }));
    const pedelec = new Pedelec();
    await expect(pedelec.listProviders()).resolves.toEqual(providers);
    await expect(pedelec.getSettings()).resolves.toEqual({
      defaultProvider: "claude",
      defaultEffortLevel: "high",
      defaultModels: { claude: "opus" },
    });
    extension.handle("getSettings", () => ({ defaultProvider: "claude", defaultEffortLevel: "high", defaultModels: {}, ollamaApiKey: "x" }));
    expect(await pedelec.getSettings()).not.toHaveProperty("ollamaApiKey");
    extension.handle("listProviders", () => [{ code: "gemini", name: "Gemini", available: true, error: null }]);
    expect((await errorOf(pedelec.listProviders())).code).toBe("SDK_PROTOCOL_ERROR");
  });

  it("does not hide real failures of getApprovalStatus", async () => {
    const extension = new FakeExtension().install();
    extension.handle("getApprovalStatus", () => ({ installed: false }));
    expect((await errorOf(new Pedelec().getApprovalStatus())).code).toBe("SDK_PROTOCOL_ERROR");
  });

  it("clamps the bridge timeout to at least 1 ms", async () => {
    const extension = new FakeExtension().install();
    extension.handle("getApprovalStatus", () => NO_REPLY);
    const pedelec = new Pedelec({ bridgeTimeoutMs: -5 });
    expect((await errorOf(pedelec.request("getApprovalStatus", {}))).code).toBe("SDK_BRIDGE_TIMEOUT");
  });

  it("sends the skills manifest without handlers and builds the session from Core's answer", async () => {
    const extension = new FakeExtension().install();
    extension.handle("createSession", () =>
      sessionInfo({ provider: "codex", effortLevel: "high", model: "gpt-5", workspace: { path: "/work/app", managed: false } }),
    );
    const addTodo = defineTool({ name: "add_todo", description: "Add a todo.", argsSchema, handler: () => ({ ok: true }) });
    const listTodos = defineTool({ name: "list_todos", description: "List todos.", argsSchema: { type: "object" }, timeoutMs: 5_000 });
    const pedelec = new Pedelec();
    const session = await pedelec.createSession({
      provider: "codex",
      model: "gpt-5",
      effortLevel: "high",
      workspace: { path: "/work/app" },
      autoEndOnDisconnect: false,
      skills: { guidance: "Be brief.", tools: [addTodo, listTodos] },
    });
    const [request] = extension.requestsOf("createSession");
    expect(request?.payload).toEqual({
      provider: "codex",
      model: "gpt-5",
      effortLevel: "high",
      workspace: { path: "/work/app" },
      autoEndOnDisconnect: false,
      skills: {
        guidance: "Be brief.",
        tools: [
          { name: "add_todo", description: "Add a todo.", argsSchema },
          { name: "list_todos", description: "List todos.", argsSchema: { type: "object" }, timeoutMs: 5_000 },
        ],
      },
    });
    expect(session).toMatchObject({
      sessionId: "session-0001",
      provider: "codex",
      effortLevel: "high",
      model: "gpt-5",
      sessionCreatedAt: "2025-01-01T00:00:00.000Z",
      workspace: { path: "/work/app", managed: false },
    });
    expect(session.getStatus()).toBe("idle");
  });

  it("sends an explicit model and effort and keeps the session only when Core confirms them", async () => {
    const extension = new FakeExtension().install();
    extension.handle("createSession", () => sessionInfo({ provider: "codex", model: "gpt-5.5", effortLevel: null, effort: "xhigh" }));
    const session = await new Pedelec().createSession({ provider: "codex", model: "gpt-5.5", effort: "xhigh" });
    expect(extension.requestsOf("createSession")[0]?.payload).toEqual({ provider: "codex", model: "gpt-5.5", effort: "xhigh" });
    expect(session).toMatchObject({ model: "gpt-5.5", effort: "xhigh", effortLevel: undefined });
  });

  it("refuses and ends a session whose Core did not confirm the explicit effort it was asked for", async () => {
    const extension = new FakeExtension().install();
    // What a Core that ignored the effort would answer: its default profile, no explicit effort.
    extension.handle("createSession", () => {
      const { effort: _effort, ...older } = sessionInfo({ provider: "claude", model: "opus", effortLevel: "medium" });
      return older;
    });
    extension.handle("endSession", () => ({}));
    const error = await errorOf(new Pedelec().createSession({ provider: "claude", model: "opus", effort: "max" }));
    expect(error).toMatchObject({
      code: "PROTOCOL_VERSION_MISMATCH",
      details: { part: "core", asked: { model: "opus", effort: "max" }, applied: { model: "opus", effort: null, effortLevel: "medium" } },
    });
    await vi.waitFor(() => expect(extension.requestsOf("endSession").map((request) => request.payload)).toEqual([{ sessionId: "session-0001" }]));
    // Another model than the one asked for is no confirmation either.
    extension.handle("createSession", () => sessionInfo({ provider: "claude", model: "sonnet", effortLevel: null, effort: "max" }));
    expect((await errorOf(new Pedelec().createSession({ provider: "claude", model: "opus", effort: "max" }))).code).toBe("PROTOCOL_VERSION_MISMATCH");
  });

  it("refuses an effort without a model, or with an effortLevel, without a round trip", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    const untyped = pedelec.createSession.bind(pedelec) as (input?: unknown) => Promise<unknown>;
    const create = (input: unknown) => errorOf(untyped(input));
    expect((await create({ provider: "claude", effort: "high" })).details).toMatchObject({
      issues: [expect.objectContaining({ path: ["effort"], message: "effort requires model" })],
    });
    expect((await create({ provider: "claude", model: "opus", effort: "high", effortLevel: "low" })).code).toBe("INVALID_INPUT");
    expect((await create({ provider: "claude", model: "opus", effort: "ultra" })).code).toBe("INVALID_INPUT");
    expect(extension.requestsOf("createSession")).toEqual([]);
  });

  it("maps a null model to undefined", async () => {
    new FakeExtension().install();
    const session = await new Pedelec().createSession();
    expect(session.model).toBeUndefined();
  });

  it("refuses bad createSession input without a round trip", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    const untyped = pedelec.createSession.bind(pedelec) as (input?: unknown) => Promise<unknown>;
    const modelOnly = await errorOf(untyped({ model: "gpt-5" }));
    expect(modelOnly.code).toBe("INVALID_INPUT");
    expect(modelOnly.details).toMatchObject({ issues: [expect.objectContaining({ path: ["model"] })] });
    const cases: unknown[] = [
      "claude",
      { provider: "gpt" },
      { unknownOption: true },
      { skills: { guidance: "", tools: [{ name: "1bad", description: "x", argsSchema: { type: "object" } }] } },
      { skills: { guidance: "", tools: [{ name: "a", description: "x", argsSchema: { type: "string" } }] } },
      { skills: { guidance: "", tools: [{ name: "a", description: "x", argsSchema: { type: "object" }, handler: 5 }] } },
      {
        skills: {
          guidance: "",
          tools: [
            { name: "a", description: "x", argsSchema: { type: "object" } },
            { name: "a", description: "y", argsSchema: { type: "object" } },
          ],
        },
      },
    ];
    for (const input of cases) expect((await errorOf(untyped(input))).code).toBe("INVALID_INPUT");
    await Promise.resolve();
    expect(extension.requestsOf("createSession")).toEqual([]);
  });

  it("passes Core's createSession errors through with their code", async () => {
    const extension = new FakeExtension().install();
    extension.handle("createSession", () => {
      throw new PedelecError("DEFAULT_PROVIDER_NOT_SET", "Choose a default provider in the Desktop app");
    });
    expect((await errorOf(new Pedelec().createSession())).code).toBe("DEFAULT_PROVIDER_NOT_SET");
  });

  it("refuses an empty session id for resumeSession without a round trip", async () => {
    const extension = new FakeExtension().install();
    const pedelec = new Pedelec();
    expect((await errorOf(pedelec.resumeSession(""))).code).toBe("INVALID_INPUT");
    expect((await errorOf(pedelec.resumeSession(undefined as unknown as string))).code).toBe("INVALID_INPUT");
    expect((await errorOf(pedelec.resumeSession("bad id!"))).code).toBe("INVALID_INPUT");
    await Promise.resolve();
    expect(extension.requests).toEqual([]);
  });

  it("resumes from Core's lastSeq, ignoring older events", async () => {
    const extension = new FakeExtension().install();
    extension.handle("resumeSession", () => sessionInfo({ sessionId: "session-resumed", lastSeq: 7, status: "running" }));
    const session = await new Pedelec().resumeSession("session-resumed");
    expect(session.getStatus()).toBe("running");
    const activities: string[] = [];
    session.onActivity((activity) => activities.push(activity.title));
    const activity = (title: string) => ({
      type: "activity-updated" as const,
      turnId: "turn-1",
      activity: { id: title, kind: "command" as const, status: "started" as const, title },
    });
    extension.emit("session-resumed", activity("old"), 7);
    extension.emit("session-resumed", activity("new"), 8);
    await vi.waitFor(() => expect(activities).toEqual(["new"]));
  });
});
