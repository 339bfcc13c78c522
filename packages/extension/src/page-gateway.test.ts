import { describe, expect, it, vi } from "vitest";
import { splitIntoChunks } from "@pedelec/protocol/chunking";
import { SDK_PORT_NAME } from "@pedelec/protocol/page-wire";
import { APPROVED_ORIGINS_KEY } from "./approval-store.js";
import { APP, createSession, hostRequest, responseOf, setup, waitOptions } from "./testing/gateway-harness.js";
import { FakePagePort, eventEnvelope, sessionInfo } from "./testing/fakes.js";
import { WORKSPACE_CONSENTS_KEY } from "./workspace-consent-store.js";

describe("PageGateway: origin", () => {
  it("takes the origin from the sender only and stamps it on forwarded requests", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    port.fromPage({ id: "1", type: "cancelTurn", payload: { sessionId: "session-aaaa" } });
    const frame = await hostRequest(() => context.host.current, "cancelTurn");
    expect(frame).toMatchObject({ kind: "request", type: "cancelTurn", origin: APP, payload: { sessionId: "session-aaaa" } });
    expect(frame.id).not.toBe("1");
  });

  it("ignores an origin a page puts in its message", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect({ origin: "https://other.example", url: "https://other.example/" });
    port.fromPage({ id: "status", type: "getApprovalStatus", payload: {} });
    expect(await responseOf(port, "status")).toMatchObject({ ok: true, result: { origin: "https://other.example", approved: false } });
    port.fromPage({ id: "send", type: "sendText", payload: { sessionId: "session-aaaa", turnId: "t1", text: "hi", origin: APP } });
    expect(await responseOf(port, "send")).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    port.fromPage({ id: "cancel", type: "cancelTurn", payload: { sessionId: "session-aaaa" }, origin: APP });
    expect(await responseOf(port, "cancel")).toMatchObject({ ok: false, error: { code: "SDK_PROTOCOL_ERROR" } });
    port.fromPage({ id: "end", type: "endSession", payload: { sessionId: "session-aaaa" } });
    expect(await responseOf(port, "end")).toMatchObject({ ok: false, error: { code: "CREATE_SESSION_NOT_APPROVED" } });
    expect(context.host.channels).toHaveLength(0);
  });

  it("opens the desktop link as a page of an approved site connects, sending nothing, and for no other site", async () => {
    const context = await setup({ approved: [APP] });
    const other = context.connect({ origin: "https://other.example", url: "https://other.example/" });
    other.fromPage({ id: "status", type: "getApprovalStatus", payload: {} });
    await responseOf(other, "status");
    expect(context.host.channels).toHaveLength(0);
    context.connect({ origin: APP });
    await vi.waitFor(() => expect(context.host.channels).toHaveLength(1));
    expect(context.host.sent).toEqual([]);
    // A second page of the site finds the link open.
    const second = context.connect({ origin: APP });
    second.fromPage({ id: "status", type: "getApprovalStatus", payload: {} });
    await responseOf(second, "status");
    expect(context.host.channels).toHaveLength(1);
  });

  it("falls back to the sender url when origin is absent", async () => {
    const context = await setup();
    const port = context.connect({ url: "http://localhost:5173/app" });
    port.fromPage({ id: "1", type: "getApprovalStatus", payload: {} });
    expect(await responseOf(port, "1")).toMatchObject({ ok: true, result: { origin: "http://localhost:5173" } });
  });

  it("answers INVALID_ORIGIN for origins Pedelec does not serve", async () => {
    const context = await setup();
    for (const origin of ["http://app.example", "chrome-extension://abcdefghijklmnop", "file://"]) {
      const port = context.connect({ origin });
      port.fromPage({ id: "1", type: "createSession", payload: {} });
      expect(await responseOf(port, "1")).toMatchObject({ ok: false, error: { code: "INVALID_ORIGIN" } });
    }
    expect(context.windows.created).toBe(0);
    expect(context.host.channels).toHaveLength(0);
  });

  it("answers SDK_ORIGIN_UNAVAILABLE to every request when the browser gave no origin", async () => {
    const context = await setup({ approved: [APP] });
    for (const sender of [undefined, {}, { origin: "null", url: `${APP}/sandboxed` }]) {
      const port = new FakePagePort(SDK_PORT_NAME, sender);
      context.gateway.accept(port);
      port.fromPage({ id: "a", type: "getApprovalStatus", payload: {} });
      port.fromPage({ id: "b", type: "createSession", payload: {} });
      port.fromPage({ id: "c", type: "noSuchRequest", payload: 1 });
      for (const id of ["a", "b", "c"]) {
        expect(await responseOf(port, id)).toMatchObject({ ok: false, error: { code: "SDK_ORIGIN_UNAVAILABLE" } });
      }
    }
    expect(context.host.channels).toHaveLength(0);
  });

  it("closes ports that do not use the SDK port name", async () => {
    const context = await setup();
    const port = new FakePagePort("something-else", { origin: APP });
    context.gateway.accept(port);
    expect(port.disconnectedByExtension).toBe(true);
  });
});

describe("PageGateway: request validation", () => {
  it("answers unknown types, bad payloads and malformed envelopes without crashing", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    port.fromPage({ id: "unknown", type: "subscribeSession", payload: { sessionId: "session-aaaa" } });
    port.fromPage({ id: "payload", type: "createSession", payload: { model: "gpt" } });
    port.fromPage({ id: "shape", type: 42, payload: {} });
    port.fromPage({ id: "", type: "createSession", payload: {} });
    port.fromPage("hello");
    port.fromPage(null);
    expect(await responseOf(port, "unknown")).toMatchObject({ ok: false, error: { code: "SDK_PROTOCOL_ERROR" } });
    expect(await responseOf(port, "payload")).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    expect(await responseOf(port, "shape")).toMatchObject({ ok: false, error: { code: "SDK_PROTOCOL_ERROR" } });
    await vi.waitFor(() => expect(context.warnings.map((warning) => warning.code)).toEqual(Array(3).fill("SDK_PROTOCOL_ERROR")), waitOptions);
    expect(context.host.sent).toEqual([]);
  });
});

describe("PageGateway: getApprovalStatus", () => {
  it("reports approval and whether Core is connected, without opening a popup", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    port.fromPage({ id: "1", type: "getApprovalStatus", payload: {} });
    expect(await responseOf(port, "1")).toEqual({
      id: "1",
      ok: true,
      result: { installed: true, approved: true, origin: APP, appConnected: false, appLaunched: false },
    });
    await createSession(context, port, "session-aaaa");
    context.host.current.hello("connected", false);
    port.fromPage({ id: "2", type: "getApprovalStatus", payload: {} });
    expect(await responseOf(port, "2")).toMatchObject({ result: { appConnected: true, appLaunched: false } });
    // The host reports that it had to start Core.
    context.host.current.hello("connected", true);
    port.fromPage({ id: "3", type: "getApprovalStatus", payload: {} });
    expect(await responseOf(port, "3")).toMatchObject({ result: { appConnected: true, appLaunched: true } });
    expect(context.windows.created).toBe(0);
  });

  it("probes the host for an approved origin but never for an unapproved one", async () => {
    const context = await setup({ approved: [APP], statusProbeTimeoutMs: 5000 });
    const stranger = context.connect({ origin: "https://stranger.example" });
    stranger.fromPage({ id: "1", type: "getApprovalStatus", payload: {} });
    expect(await responseOf(stranger, "1")).toMatchObject({ result: { approved: false, appConnected: false } });
    expect(context.host.channels).toHaveLength(0);

    const port = context.connect();
    port.fromPage({ id: "2", type: "getApprovalStatus", payload: {} });
    await vi.waitFor(() => expect(context.host.channels).toHaveLength(1), waitOptions);
    context.host.current.hello("connected");
    expect(await responseOf(port, "2")).toMatchObject({ result: { approved: true, appConnected: true } });
  });

  it("answers STORAGE_ERROR when approvals cannot be read", async () => {
    const context = await setup();
    context.storage.failReads = true;
    const port = context.connect();
    port.fromPage({ id: "1", type: "getApprovalStatus", payload: {} });
    expect(await responseOf(port, "1")).toMatchObject({ ok: false, error: { code: "STORAGE_ERROR" } });
  });
});

describe("PageGateway: approval", () => {
  it("asks, persists the approval, reports progress and forwards with the origin stamped", async () => {
    const context = await setup();
    const port = context.connect();
    port.fromPage({ id: "c1", type: "createSession", payload: { provider: "claude" } });
    await vi.waitFor(() => expect(context.windows.created).toBe(1), waitOptions);
    expect(port.sent).toEqual([{ type: "request-progress", id: "c1", stage: "awaiting-approval" }]);
    expect(context.host.channels).toHaveLength(0);

    await context.approvals.decide(APP, "approve");
    expect(context.storage.values.get(APPROVED_ORIGINS_KEY)).toEqual([APP]);
    const frame = await hostRequest(() => context.host.current, "createSession");
    expect(frame).toMatchObject({ origin: APP, payload: { provider: "claude" } });
    expect(port.sent[1]).toEqual({ type: "request-progress", id: "c1", stage: "approval-settled" });
    context.host.current.respond(frame, sessionInfo("session-aaaa"));
    expect(await responseOf(port, "c1")).toMatchObject({ ok: true, result: { sessionId: "session-aaaa" } });
  });

  it("shares one pending approval between requests of one origin", async () => {
    const context = await setup();
    const first = context.connect();
    const second = context.connect();
    first.fromPage({ id: "1", type: "createSession", payload: {} });
    second.fromPage({ id: "1", type: "resumeSession", payload: { sessionId: "session-aaaa" } });
    await vi.waitFor(() => expect(second.sent).toHaveLength(1), waitOptions);
    expect(context.windows.created).toBe(1);
    expect(context.approvals.list()).toHaveLength(1);
    await context.approvals.decide(APP, "approve");
    await hostRequest(() => context.host.current, "createSession");
    await hostRequest(() => context.host.current, "resumeSession");
  });

  it("answers APPROVAL_REJECTED and stores nothing", async () => {
    const context = await setup();
    const port = context.connect();
    port.fromPage({ id: "1", type: "createSession", payload: {} });
    await vi.waitFor(() => expect(context.windows.created).toBe(1), waitOptions);
    await context.approvals.decide(APP, "reject");
    expect(await responseOf(port, "1")).toMatchObject({ ok: false, error: { code: "APPROVAL_REJECTED" } });
    expect(context.storage.values.get(APPROVED_ORIGINS_KEY)).toBeUndefined();
    expect(context.host.channels).toHaveLength(0);
  });

  it("answers APPROVAL_TIMEOUT when nobody answers in time", async () => {
    const context = await setup({ approvalTimeoutMs: 25 });
    const port = context.connect();
    port.fromPage({ id: "1", type: "resumeSession", payload: { sessionId: "session-aaaa" } });
    expect(await responseOf(port, "1")).toMatchObject({ ok: false, error: { code: "APPROVAL_TIMEOUT" } });
    expect(context.host.channels).toHaveLength(0);
  });

  it("answers OPEN_POPUP_FAILED when the window cannot be created", async () => {
    const context = await setup({ windowFailure: new Error("Invalid value for bounds") });
    const port = context.connect();
    port.fromPage({ id: "1", type: "createSession", payload: {} });
    expect(await responseOf(port, "1")).toMatchObject({ ok: false, error: { code: "OPEN_POPUP_FAILED" } });
  });

  it("answers STORAGE_ERROR when the approval cannot be saved", async () => {
    const context = await setup();
    const port = context.connect();
    port.fromPage({ id: "1", type: "createSession", payload: {} });
    await vi.waitFor(() => expect(context.windows.created).toBe(1), waitOptions);
    context.storage.failWrites = true;
    await expect(context.approvals.decide(APP, "approve")).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    expect(await responseOf(port, "1")).toMatchObject({ ok: false, error: { code: "STORAGE_ERROR" } });
  });

  it("refuses other session requests from an unapproved origin", async () => {
    const context = await setup();
    const port = context.connect();
    const requests = [
      { type: "sendText", payload: { sessionId: "session-aaaa", turnId: "t1", text: "hi" } },
      { type: "submitToolResult", payload: { sessionId: "session-aaaa", toolRequestId: "r1", outcome: { ok: true, result: 1 } } },
      { type: "cancelTurn", payload: { sessionId: "session-aaaa" } },
      { type: "endSession", payload: { sessionId: "session-aaaa" } },
    ];
    for (const [index, request] of requests.entries()) port.fromPage({ id: `r${index}`, ...request });
    for (const index of requests.keys()) {
      expect(await responseOf(port, `r${index}`)).toMatchObject({ ok: false, error: { code: "CREATE_SESSION_NOT_APPROVED" } });
    }
    expect(context.windows.created).toBe(0);
    expect(context.host.channels).toHaveLength(0);
  });

  it("withdraws the approval question when the waiting page leaves", async () => {
    const context = await setup();
    const port = context.connect();
    port.fromPage({ id: "1", type: "createSession", payload: {} });
    await vi.waitFor(() => expect(context.approvals.list()).toHaveLength(1), waitOptions);
    port.closeFromPage();
    await vi.waitFor(() => expect(context.approvals.list()).toEqual([]), waitOptions);
  });
});

describe("PageGateway: workspace folder", () => {
  const FOLDER = "/home/me/project";

  it("asks the origin, then the folder, in one pause of the bridge timeout, and forwards the normalized folder", async () => {
    const context = await setup();
    const port = context.connect();
    port.fromPage({ id: "c1", type: "createSession", payload: { workspace: { path: "//home/me/project/" } } });
    await vi.waitFor(() => expect(context.approvals.list()).toMatchObject([{ kind: "origin", origin: APP }]), waitOptions);
    await context.approvals.decide(APP, "approve");
    await vi.waitFor(() => expect(context.approvals.list()).toMatchObject([{ kind: "workspace", origin: APP, path: FOLDER }]), waitOptions);
    expect(context.host.channels).toHaveLength(0);
    await context.approvals.decideWorkspace(APP, FOLDER, "allow");
    const frame = await hostRequest(() => context.host.current, "createSession");
    expect(frame).toMatchObject({ origin: APP, payload: { workspace: { path: FOLDER } } });
    expect(port.sent).toEqual([
      { type: "request-progress", id: "c1", stage: "awaiting-approval" },
      { type: "request-progress", id: "c1", stage: "approval-settled" },
    ]);
    expect(context.storage.values.get(WORKSPACE_CONSENTS_KEY)).toEqual({ [APP]: [FOLDER] });
    expect(context.windows.created).toBe(1);
    context.host.current.respond(frame, sessionInfo("session-aaaa"));
    expect(await responseOf(port, "c1")).toMatchObject({ ok: true });
  });

  it("answers WORKSPACE_PATH_INVALID and forwards nothing when the user does not allow the folder", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    port.fromPage({ id: "c1", type: "createSession", payload: { workspace: { path: FOLDER } } });
    await vi.waitFor(() => expect(context.approvals.list()).toHaveLength(1), waitOptions);
    await context.approvals.decideWorkspace(APP, FOLDER, "deny");
    expect(await responseOf(port, "c1")).toMatchObject({
      ok: false,
      error: { code: "WORKSPACE_PATH_INVALID", message: `the user did not allow ${APP} to use ${FOLDER}` },
    });
    expect(context.host.sent).toEqual([]);
  });

  it("forwards a consented folder without asking, and asks again for another origin", async () => {
    const context = await setup({ approved: [APP, "https://other.example"], consented: { [APP]: [FOLDER] } });
    const port = context.connect();
    port.fromPage({ id: "c1", type: "createSession", payload: { workspace: { path: FOLDER } } });
    const frame = await hostRequest(() => context.host.current, "createSession");
    expect(frame).toMatchObject({ payload: { workspace: { path: FOLDER } } });
    expect(port.sent).toEqual([]);

    const other = context.connect({ origin: "https://other.example" });
    other.fromPage({ id: "c2", type: "createSession", payload: { workspace: { path: FOLDER } } });
    await vi.waitFor(() => expect(context.approvals.list()).toMatchObject([{ kind: "workspace", origin: "https://other.example" }]), waitOptions);
  });

  it("asks about the folder again when the origin itself needed approval, whatever storage says", async () => {
    const context = await setup({ consented: { [APP]: [FOLDER] } });
    const port = context.connect();
    port.fromPage({ id: "c1", type: "createSession", payload: { workspace: { path: FOLDER } } });
    await vi.waitFor(() => expect(context.approvals.list()).toHaveLength(1), waitOptions);
    await context.approvals.decide(APP, "approve");
    await vi.waitFor(() => expect(context.approvals.list()).toMatchObject([{ kind: "workspace", path: FOLDER }]), waitOptions);
  });

  it("refuses system folders and unnormalizable paths without asking anything", async () => {
    const context = await setup();
    const port = context.connect();
    const paths = ["/etc", "/", "/usr/", "/home/me/../../etc", "relative/path", "/proc/self"];
    for (const [index, path] of paths.entries()) port.fromPage({ id: `c${index}`, type: "createSession", payload: { workspace: { path } } });
    for (const index of paths.keys()) {
      expect(await responseOf(port, `c${index}`)).toMatchObject({ ok: false, error: { code: "WORKSPACE_PATH_INVALID" } });
    }
    expect(context.approvals.list()).toEqual([]);
    expect(context.windows.created).toBe(0);
    expect(port.sent.filter((message) => (message as { type?: string }).type === "request-progress")).toEqual([]);
    expect(context.host.channels).toHaveLength(0);
  });
});

describe("PageGateway: forwarding and routing", () => {
  it("maps responses back when two pages use the same request id", async () => {
    const context = await setup({ approved: [APP] });
    const left = context.connect();
    const right = context.connect();
    left.fromPage({ id: "7", type: "cancelTurn", payload: { sessionId: "session-left" } });
    right.fromPage({ id: "7", type: "cancelTurn", payload: { sessionId: "session-right" } });
    const leftFrame = await hostRequest(() => context.host.current, "cancelTurn", 0);
    const rightFrame = await hostRequest(() => context.host.current, "cancelTurn", 1);
    expect(leftFrame.id).not.toBe(rightFrame.id);
    context.host.current.respond(rightFrame, { cancelled: false });
    context.host.current.respond(leftFrame, { cancelled: true });
    expect(await responseOf(left, "7")).toEqual({ id: "7", ok: true, result: { cancelled: true } });
    expect(await responseOf(right, "7")).toEqual({ id: "7", ok: true, result: { cancelled: false } });
    expect(left.responsesFor("7")).toHaveLength(1);
  });

  it("fans events out to every port subscribed to the session, and only to them", async () => {
    const context = await setup({ approved: [APP] });
    const first = context.connect();
    const second = context.connect();
    const bystander = context.connect();
    await createSession(context, first, "session-aaaa");
    await createSession(context, second, "session-aaaa", { type: "resumeSession" });
    await createSession(context, bystander, "session-bbbb");
    const envelope = eventEnvelope("session-aaaa", 3, { type: "chat-delta", turnId: "t1", messageId: "m1", delta: "Hel" });
    context.host.current.emit({ kind: "event", envelope });
    expect(first.events()).toEqual([envelope]);
    expect(second.events()).toEqual([envelope]);
    expect(bystander.events()).toEqual([]);
  });

  it("sends each route an event once, even when Core replays it for another request", async () => {
    const context = await setup({ approved: [APP] });
    const old = context.connect();
    await createSession(context, old, "session-aaaa");
    const events = [1, 2, 3].map((seq) => eventEnvelope("session-aaaa", seq, { type: "chat-delta", turnId: "t1", messageId: "m1", delta: `${seq}` }));
    for (const envelope of events) context.host.current.emit({ kind: "event", envelope });
    // A reloaded page resumes from seq 1: Core replays 2 and 3 to the extension, which the old route already has.
    const reloaded = context.connect();
    await createSession(context, reloaded, "session-aaaa", { type: "resumeSession" });
    for (const envelope of events.slice(1)) context.host.current.emit({ kind: "event", envelope });
    // …and again, for the extension's own resubscribe.
    for (const envelope of events.slice(1)) context.host.current.emit({ kind: "event", envelope });
    expect(old.events().map((event) => event.seq)).toEqual([1, 2, 3]);
    expect(reloaded.events().map((event) => event.seq)).toEqual([2, 3]);
  });

  it("drops a session's routes when it ends", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    await createSession(context, port, "session-aaaa");
    expect(context.ledger.at(-1)).toEqual([{ sessionId: "session-aaaa", origin: APP }]);
    context.host.current.emit({ kind: "event", envelope: eventEnvelope("session-aaaa", 5, { type: "session-ended", reason: "requested" }) });
    context.host.current.emit({ kind: "event", envelope: eventEnvelope("session-aaaa", 6, { type: "status-changed", status: "ended" }) });
    expect(port.events().map((event) => event.seq)).toEqual([5]);
    expect(context.ledger.at(-1)).toEqual([]);
    port.closeFromPage();
    expect(context.host.current.requests("endSession")).toEqual([]);
  });

  it("keeps delivering to live ports when one port is already dead", async () => {
    const context = await setup({ approved: [APP] });
    const dead = context.connect();
    const live = context.connect();
    await createSession(context, dead, "session-aaaa");
    await createSession(context, live, "session-aaaa", { type: "resumeSession" });
    dead.gone = true; // Gone, but Chrome has not fired onDisconnect yet.
    const envelope = eventEnvelope("session-aaaa", 2, { type: "status-changed", status: "running" });
    expect(() => context.host.current.emit({ kind: "event", envelope })).not.toThrow();
    expect(live.events()).toEqual([envelope]);
    dead.fromPage({ id: "late", type: "cancelTurn", payload: { sessionId: "session-aaaa" } });
    const frame = await hostRequest(() => context.host.current, "cancelTurn");
    expect(() => context.host.current.respond(frame, { cancelled: true })).not.toThrow();
  });

  it("delivers chunked responses and events whole", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    await createSession(context, port, "session-aaaa");
    const text = "z".repeat(4000);
    const envelope = eventEnvelope("session-aaaa", 9, { type: "chat-completed", turnId: "t1", messageId: "m1", text });
    for (const frame of splitIntoChunks({ kind: "event", envelope }, 1024, "chunked-event")) context.host.current.emit(JSON.parse(frame));
    expect(port.events()).toEqual([envelope]);

    port.fromPage({ id: "send", type: "sendText", payload: { sessionId: "session-aaaa", turnId: "t1", text } });
    const request = await hostRequest(() => context.host.current, "sendText");
    expect(request.payload).toMatchObject({ text });
    const response = { kind: "response", id: request.id, ok: true, result: { turnId: "t1", echo: text } };
    for (const frame of splitIntoChunks(response, 1024, "chunked-response")) context.host.current.emit(JSON.parse(frame));
    expect(await responseOf(port, "send")).toEqual({ id: "send", ok: true, result: { turnId: "t1", echo: text } });
  });

  it("answers SDK_PROTOCOL_ERROR when Core's session answer is not a SessionInfo", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    port.fromPage({ id: "1", type: "createSession", payload: {} });
    const frame = await hostRequest(() => context.host.current, "createSession");
    context.host.current.respond(frame, { sessionId: "session-aaaa" });
    expect(await responseOf(port, "1")).toMatchObject({ ok: false, error: { code: "SDK_PROTOCOL_ERROR" } });
  });
});

describe("PageGateway: auto end", () => {
  it("ends a session when its last route disconnects, not before", async () => {
    const context = await setup({ approved: [APP] });
    const first = context.connect();
    const second = context.connect();
    await createSession(context, first, "session-aaaa");
    await createSession(context, second, "session-aaaa", { type: "resumeSession" });
    first.closeFromPage();
    expect(context.host.current.requests("endSession")).toEqual([]);
    second.closeFromPage();
    const frame = await hostRequest(() => context.host.current, "endSession");
    expect(frame).toMatchObject({ origin: APP, payload: { sessionId: "session-aaaa", reason: "disconnected" } });
    expect(context.ledger.at(-1)).toEqual([]);
  });

  it("leaves sessions without autoEndOnDisconnect running", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    await createSession(context, port, "session-keep", { autoEnd: false });
    expect(context.ledger.at(-1)).toEqual([]);
    port.closeFromPage();
    expect(context.host.current.requests("endSession")).toEqual([]);
  });

  it("logs AUTO_END_SESSION_FAILED when ending fails", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    await createSession(context, port, "session-aaaa");
    port.closeFromPage();
    const frame = await hostRequest(() => context.host.current, "endSession");
    context.host.current.fail(frame, "CORE_RUNTIME_UNAVAILABLE", "Core is gone");
    await vi.waitFor(() => expect(context.warnings.map((warning) => warning.code)).toContain("AUTO_END_SESSION_FAILED"), waitOptions);
    expect(context.warnings[0]?.details).toMatchObject({ code: "CORE_RUNTIME_UNAVAILABLE" });
  });

  it("ends a session whose page left while Core was creating it", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    port.fromPage({ id: "1", type: "createSession", payload: {} });
    const frame = await hostRequest(() => context.host.current, "createSession");
    port.closeFromPage();
    context.host.current.respond(frame, sessionInfo("session-late"));
    const end = await hostRequest(() => context.host.current, "endSession");
    expect(end).toMatchObject({ origin: APP, payload: { sessionId: "session-late" } });
  });

  it("ends orphans a previous worker left, except sessions a page routes again", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    await createSession(context, port, "session-back");
    const ending = context.gateway.endOrphans([
      { sessionId: "session-back", origin: APP },
      { sessionId: "session-gone", origin: APP },
      { sessionId: "session-lost", origin: "https://other.example" },
    ]);
    const first = await hostRequest(() => context.host.current, "endSession", 0);
    const second = await hostRequest(() => context.host.current, "endSession", 1);
    expect([first.payload, second.payload]).toEqual([
      { sessionId: "session-gone", reason: "disconnected" },
      { sessionId: "session-lost", reason: "disconnected" },
    ]);
    expect(second.origin).toBe("https://other.example");
    context.host.current.fail(first, "SESSION_ENDED", "already ended");
    context.host.current.respond(second, { ended: true });
    await ending;
    expect(context.warnings).toEqual([]);
  });
});

describe("PageGateway: native link failures", () => {
  it("answers NATIVE_HOST_UNAVAILABLE when the host dies before it spoke", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    port.fromPage({ id: "1", type: "createSession", payload: {} });
    await hostRequest(() => context.host.current, "createSession");
    context.host.current.die("Specified native messaging host not found.");
    expect(await responseOf(port, "1")).toMatchObject({
      ok: false,
      error: { code: "NATIVE_HOST_UNAVAILABLE", details: { lastError: "Specified native messaging host not found." } },
    });
  });

  it("answers NATIVE_CONNECTION_CLOSED when the host dies after it spoke", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    port.fromPage({ id: "1", type: "sendText", payload: { sessionId: "session-aaaa", turnId: "t1", text: "hi" } });
    await hostRequest(() => context.host.current, "sendText");
    context.host.current.hello();
    context.host.current.die("Native host has exited.");
    expect(await responseOf(port, "1")).toMatchObject({ ok: false, error: { code: "NATIVE_CONNECTION_CLOSED" } });
  });

  it("tells pages following a session when the host goes away, and when Core does", async () => {
    const context = await setup({ approved: [APP] });
    const follower = context.connect();
    const bystander = context.connect();
    await createSession(context, follower, "session-aaaa");
    const interruptions = () => follower.sent.filter((message) => (message as { type?: string }).type === "session-interrupted");

    context.host.current.hello("unavailable");
    expect(interruptions()).toEqual([]); // Core was never up on this link: nothing was lost.

    context.host.current.hello("connected");
    context.host.current.emit({
      kind: "host-status",
      version: "0.1.0",
      core: "unavailable",
      error: { code: "CORE_RUNTIME_UNAVAILABLE", message: "the connection to Pedelec Core closed" },
    });
    expect(interruptions()).toEqual([
      {
        type: "session-interrupted",
        sessionId: "session-aaaa",
        error: { code: "CORE_RUNTIME_UNAVAILABLE", message: "the connection to Pedelec Core closed" },
      },
    ]);

    context.host.current.die("Native host has exited.");
    expect(interruptions().at(-1)).toMatchObject({ sessionId: "session-aaaa", error: { code: "NATIVE_CONNECTION_CLOSED" } });
    expect(bystander.sent.some((message) => (message as { type?: string }).type === "session-interrupted")).toBe(false);
  });

  it("resubscribes from the newest routed seq when the host reaches a restarted Core on the same channel", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    await createSession(context, port, "session-aaaa");
    context.host.current.hello("connected");
    context.host.current.emit({ kind: "event", envelope: eventEnvelope("session-aaaa", 4, { type: "status-changed", status: "running" }) });
    const lost = { code: "CORE_RUNTIME_UNAVAILABLE", message: "the connection to Pedelec Core closed" };
    context.host.current.emit({ kind: "host-status", version: "0.1.0", core: "unavailable", error: lost });
    expect(context.host.current.requests("subscribeSession")).toEqual([]);
    context.host.current.emit({ kind: "host-status", version: "0.1.0", core: "connected" });
    const frame = await hostRequest(() => context.host.current, "subscribeSession");
    expect(frame).toMatchObject({ origin: APP, payload: { sessionId: "session-aaaa", afterSeq: 4 } });
    expect(context.host.channels).toHaveLength(1);
    // A second "connected" without a loss in between is no new Core.
    context.host.current.emit({ kind: "host-status", version: "0.1.0", core: "connected" });
    expect(context.host.current.requests("subscribeSession")).toHaveLength(1);
  });

  it("resubscribes routed sessions on the new connection before the request that reopened it", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    const other = context.connect({ origin: "http://127.0.0.1:8080" });
    await context.gateway.endOrphans([]);
    await createSession(context, port, "session-aaaa");
    await createSession(context, port, "session-keep", { autoEnd: false });
    context.host.current.hello();
    context.host.current.die("Native host has exited.");

    port.fromPage({ id: "send", type: "sendText", payload: { sessionId: "session-aaaa", turnId: "t2", text: "again" } });
    const send = await hostRequest(() => context.host.current, "sendText");
    expect(context.host.channels).toHaveLength(2);
    const frames = context.host.current.sent;
    expect(frames.map((frame) => [frame.type, frame.origin, frame.payload])).toEqual([
      // With the newest seq routed so far, so Core replays what the pages missed while the link was down.
      ["subscribeSession", APP, { sessionId: "session-aaaa", afterSeq: 0 }],
      ["subscribeSession", APP, { sessionId: "session-keep", afterSeq: 0 }],
      ["sendText", APP, { sessionId: "session-aaaa", turnId: "t2", text: "again" }],
    ]);
    context.host.current.respond(send, { turnId: "t2" });
    expect(await responseOf(port, "send")).toMatchObject({ ok: true });
    expect(other.sent).toEqual([]);
  });

  it("forgets a session Core no longer knows when resubscribing fails", async () => {
    const context = await setup({ approved: [APP] });
    const port = context.connect();
    await createSession(context, port, "session-aaaa");
    context.host.current.hello();
    context.host.current.die("Native host has exited.");
    port.fromPage({ id: "cancel", type: "cancelTurn", payload: { sessionId: "session-bbbb" } });
    const subscribe = await hostRequest(() => context.host.current, "subscribeSession");
    context.host.current.fail(subscribe, "THREAD_NOT_FOUND", "unknown session");
    await vi.waitFor(() => expect(context.ledger.at(-1)).toEqual([]), waitOptions);
    port.closeFromPage();
    expect(context.host.current.requests("endSession")).toEqual([]);
  });
});

describe("PageGateway: tool-call claims", () => {
  it("delivers a result the page sent as it went away, and releases its claims only after it", async () => {
    const context = await setup({ approved: [APP] });
    const page = context.connect();
    await createSession(context, page, "session-aaaa");
    page.fromPage({ id: "c1", type: "claimToolCall", payload: { sessionId: "session-aaaa", toolRequestId: "call-1" } });
    context.host.current.respond(await hostRequest(() => context.host.current, "claimToolCall"), { claimed: true });
    expect(await responseOf(page, "c1")).toMatchObject({ ok: true, result: { claimed: true } });

    // The handler returned and the tab reloaded in the same task: the result and the port's end arrive together.
    page.fromPage({
      id: "s1",
      type: "submitToolResult",
      payload: { sessionId: "session-aaaa", toolRequestId: "call-1", outcome: { ok: true, result: "done" } },
    });
    page.closeFromPage();
    await hostRequest(() => context.host.current, "releaseToolClaims");
    const order = context.host.sent.filter((message) => message.kind === "request").map((message) => message.type);
    expect(order.slice(-2)).toEqual(["submitToolResult", "releaseToolClaims"]);
  });

  it("stamps each page route as the claimant, refuses one a page names, and releases a route's claims when it leaves", async () => {
    const context = await setup({ approved: [APP] });
    const first = context.connect();
    const second = context.connect();
    await createSession(context, first, "session-aaaa");
    await createSession(context, second, "session-aaaa", { type: "resumeSession" });

    first.fromPage({ id: "c1", type: "claimToolCall", payload: { sessionId: "session-aaaa", toolRequestId: "call-1" } });
    const firstClaim = await hostRequest(() => context.host.current, "claimToolCall", 0);
    context.host.current.respond(firstClaim, { claimed: true });
    second.fromPage({ id: "c2", type: "claimToolCall", payload: { sessionId: "session-aaaa", toolRequestId: "call-1" } });
    const secondClaim = await hostRequest(() => context.host.current, "claimToolCall", 1);
    context.host.current.respond(secondClaim, { claimed: false });
    expect(await responseOf(second, "c2")).toMatchObject({ ok: true, result: { claimed: false } });
    const claimantOf = (frame: { payload: unknown }) => (frame.payload as { claimant: string }).claimant;
    expect(claimantOf(firstClaim)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(claimantOf(secondClaim)).not.toBe(claimantOf(firstClaim));

    // The same route answers under the same claimant.
    first.fromPage({
      id: "s1",
      type: "submitToolResult",
      payload: { sessionId: "session-aaaa", toolRequestId: "call-1", outcome: { ok: true, result: 1 } },
    });
    const submit = await hostRequest(() => context.host.current, "submitToolResult");
    expect(claimantOf(submit)).toBe(claimantOf(firstClaim));

    // A page cannot pick a claimant (another tab's, say): the payload is refused before anything is sent.
    second.fromPage({
      id: "forged",
      type: "claimToolCall",
      payload: { sessionId: "session-aaaa", toolRequestId: "call-1", claimant: claimantOf(firstClaim) },
    });
    expect(await responseOf(second, "forged")).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });

    first.closeFromPage();
    const release = await hostRequest(() => context.host.current, "releaseToolClaims");
    expect(release).toMatchObject({ origin: APP, payload: { claimant: claimantOf(firstClaim) } });
    // A route that never tried to claim anything has nothing to release.
    const bystander = context.connect();
    await createSession(context, bystander, "session-aaaa", { type: "resumeSession" });
    bystander.closeFromPage();
    second.closeFromPage();
    await vi.waitFor(() => expect(context.host.current.requests("endSession")).toHaveLength(1), waitOptions);
    expect(context.host.current.requests("releaseToolClaims").map(claimantOf)).toEqual([claimantOf(firstClaim), claimantOf(secondClaim)]);
  });
});
