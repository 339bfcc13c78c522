import { describe, expect, it, vi } from "vitest";
import { extensionToHostMessageSchema } from "@pedelec/protocol/native-wire";
import { APP, hostRequest, responseOf, setup, waitOptions, type GatewayContext } from "./testing/gateway-harness.js";
import { sessionInfo } from "./testing/fakes.js";

const OTHER = "https://other.example";
const run = { sessionId: "session-aaaa", runId: "run-1", source: "console.log(1)" };

/** The claim the gateway makes for APP in the harness: its clock reads 1000 ms, ids are fixed. */
const appClaim = {
  instanceId: "instance-abcdefghijklmnopqrstu",
  approvalGrantedAt: 1000,
  fullAccessGrantId: "grant-1-abcdefghijklmnopq",
  fullAccessGrantedAt: 1000,
};

/** Revokes `origin`'s Full Access and lets its first delivery fail as a host that never started would. */
async function revokeUndelivered(context: GatewayContext, origin: string) {
  await context.revocations.revoke(origin);
  const frame = await hostRequest(() => context.host.current, "revokeFullAccess");
  context.host.current.die("Specified native messaging host not found.");
  await vi.waitFor(() => expect(context.warnings.map((warning) => warning.code)).toContain("NATIVE_HOST_UNAVAILABLE"), waitOptions);
  return frame;
}

describe("PageGateway: Full Access claims", () => {
  it("attaches the claim to createSession and runWorkspaceScript asking for Full Access from a granted origin", async () => {
    const context = await setup({ granted: [APP] });
    const port = context.connect();
    port.fromPage({ id: "c1", type: "createSession", payload: { provider: "claude", access: "full" } });
    const create = await hostRequest(() => context.host.current, "createSession");
    expect(create).toMatchObject({ origin: APP, payload: { provider: "claude", access: "full" }, fullAccessClaim: appClaim });
    expect(extensionToHostMessageSchema.safeParse(create).success).toBe(true);
    context.host.current.respond(create, { ...sessionInfo("session-aaaa"), access: "full" });
    expect(await responseOf(port, "c1")).toMatchObject({ ok: true, result: { access: "full" } });

    port.fromPage({ id: "r1", type: "runWorkspaceScript", payload: { ...run, access: "full" } });
    const script = await hostRequest(() => context.host.current, "runWorkspaceScript");
    expect(script).toMatchObject({ origin: APP, payload: { ...run, access: "full" }, fullAccessClaim: appClaim });
    expect(extensionToHostMessageSchema.safeParse(script).success).toBe(true);
  });

  it("attaches no claim to any other request, even from a granted origin", async () => {
    const context = await setup({ granted: [APP] });
    const port = context.connect();
    const requests = [
      { type: "createSession", payload: {} },
      { type: "createSession", payload: { access: "sandbox" } },
      { type: "resumeSession", payload: { sessionId: "session-aaaa" } },
      { type: "runWorkspaceScript", payload: run },
      { type: "runWorkspaceScript", payload: { ...run, runId: "run-2", access: "sandbox" } },
      { type: "cancelWorkspaceRun", payload: { sessionId: "session-aaaa", runId: "run-1" } },
      { type: "sendText", payload: { sessionId: "session-aaaa", turnId: "t1", text: "hi" } },
    ];
    for (const [index, request] of requests.entries()) port.fromPage({ id: `r${index}`, ...request });
    await vi.waitFor(() => expect(context.host.current.sent).toHaveLength(requests.length), waitOptions);
    for (const frame of context.host.current.sent) {
      expect(frame.origin).toBe(APP);
      expect(frame).not.toHaveProperty("fullAccessClaim");
    }
  });

  it("refuses Full Access to an origin without a grant at once, sending nothing and asking nothing", async () => {
    const context = await setup({ approved: [APP], granted: [OTHER] });
    const approvedPort = context.connect();
    approvedPort.fromPage({ id: "c1", type: "createSession", payload: { access: "full" } });
    approvedPort.fromPage({ id: "r1", type: "runWorkspaceScript", payload: { ...run, access: "full" } });
    const stranger = context.connect({ origin: "https://stranger.example" });
    stranger.fromPage({ id: "c2", type: "createSession", payload: { access: "full" } });
    for (const [port, id] of [
      [approvedPort, "c1"],
      [approvedPort, "r1"],
      [stranger, "c2"],
    ] as const) {
      expect(await responseOf(port, id)).toMatchObject({ ok: false, error: { code: "FULL_ACCESS_NOT_GRANTED" } });
    }
    expect(stranger.sent.filter((message) => (message as { type?: string }).type === "request-progress")).toEqual([]);
    expect(context.windows.created).toBe(0);
    expect(context.approvals.list()).toEqual([]);
    expect(context.host.sent).toEqual([]);
  });

  it("keeps runWorkspaceScript and cancelWorkspaceRun on the approved-origin path", async () => {
    const context = await setup();
    const port = context.connect();
    port.fromPage({ id: "r1", type: "runWorkspaceScript", payload: run });
    port.fromPage({ id: "r2", type: "cancelWorkspaceRun", payload: { sessionId: "session-aaaa", runId: "run-1" } });
    for (const id of ["r1", "r2"]) {
      expect(await responseOf(port, id)).toMatchObject({ ok: false, error: { code: "CREATE_SESSION_NOT_APPROVED" } });
    }
    expect(context.windows.created).toBe(0);
    expect(context.host.channels).toHaveLength(0);

    await context.approvedOrigins.approve(APP);
    port.fromPage({ id: "r3", type: "cancelWorkspaceRun", payload: { sessionId: "session-aaaa", runId: "run-1" } });
    const frame = await hostRequest(() => context.host.current, "cancelWorkspaceRun");
    context.host.current.respond(frame, { cancelled: true });
    expect(await responseOf(port, "r3")).toEqual({ id: "r3", ok: true, result: { cancelled: true } });
  });

  it("lets no page add or forge a claim: extra keys in the payload or the envelope are refused", async () => {
    const context = await setup({ granted: [APP] });
    const port = context.connect();
    const forged = { ...appClaim, fullAccessGrantId: "forged-abcdefghijklmnopqrstu" };
    port.fromPage({ id: "p1", type: "createSession", payload: { access: "full", fullAccessClaim: forged } });
    port.fromPage({ id: "p2", type: "runWorkspaceScript", payload: { ...run, access: "full", fullAccessClaim: forged } });
    port.fromPage({ id: "p3", type: "createSession", payload: { access: "full", attestation: { claims: "{}", signature: "x" } } });
    port.fromPage({ id: "p4", type: "runWorkspaceScript", payload: { ...run, approved: true } });
    port.fromPage({ id: "e1", type: "createSession", payload: { access: "full" }, fullAccessClaim: forged });
    port.fromPage({ id: "e2", type: "runWorkspaceScript", payload: run, origin: APP, fullAccessClaim: forged });
    for (const id of ["p1", "p2", "p3", "p4"]) expect(await responseOf(port, id)).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    for (const id of ["e1", "e2"]) expect(await responseOf(port, id)).toMatchObject({ ok: false, error: { code: "SDK_PROTOCOL_ERROR" } });
    expect(context.host.sent).toEqual([]);
  });

  it("answers STORAGE_ERROR when the grants cannot be read", async () => {
    const context = await setup({ granted: [APP] });
    context.storage.failReads = true;
    const port = context.connect();
    port.fromPage({ id: "c1", type: "createSession", payload: { access: "full" } });
    expect(await responseOf(port, "c1")).toMatchObject({ ok: false, error: { code: "STORAGE_ERROR" } });
    expect(context.host.channels).toHaveLength(0);
  });
});

describe("PageGateway: Full Access revocations", () => {
  it("sends a stored revocation ahead of the next request, of any origin", async () => {
    const context = await setup({ approved: [OTHER], granted: [APP] });
    await revokeUndelivered(context, APP);
    const other = context.connect({ origin: OTHER });
    other.fromPage({ id: "s1", type: "sendText", payload: { sessionId: "session-bbbb", turnId: "t1", text: "hi" } });
    const send = await hostRequest(() => context.host.current, "sendText");
    expect(context.host.channels).toHaveLength(2);
    expect(context.host.current.sent.map((frame) => [frame.type, frame.origin])).toEqual([
      ["revokeFullAccess", APP],
      ["sendText", OTHER],
    ]);
    expect(context.host.current.sent[0]).toMatchObject({ payload: { revokedAt: 1000 } });
    // The other origin is answered although APP's revocation is still unanswered.
    context.host.current.respond(send, { turnId: "t1" });
    expect(await responseOf(other, "s1")).toMatchObject({ ok: true });
  });

  it("refuses the revoked origin's requests while its revocation cannot be delivered, and serves them once it is", async () => {
    const context = await setup({ granted: [APP] });
    await revokeUndelivered(context, APP);
    const port = context.connect();
    port.fromPage({ id: "s1", type: "sendText", payload: { sessionId: "session-aaaa", turnId: "t1", text: "hi" } });
    await vi.waitFor(() => expect(context.host.channels).toHaveLength(2), waitOptions);
    await hostRequest(() => context.host.current, "revokeFullAccess");
    expect(context.host.current.requests("sendText")).toEqual([]);
    context.host.current.hello();
    context.host.current.fail(context.host.current.requests("revokeFullAccess")[0]!, "CORE_RUNTIME_UNAVAILABLE", "Core is gone");
    expect(await responseOf(port, "s1")).toMatchObject({ ok: false, error: { code: "CORE_RUNTIME_UNAVAILABLE", message: "Core is gone" } });
    expect(context.host.current.requests("sendText")).toEqual([]);
    expect(await context.pendingRevocations.list()).toEqual({ [APP]: 1000 });

    // Stopping something is never held back.
    port.fromPage({ id: "x1", type: "cancelTurn", payload: { sessionId: "session-aaaa" } });
    const retry = await hostRequest(() => context.host.current, "revokeFullAccess", 1);
    context.host.current.fail(retry, "CORE_RUNTIME_UNAVAILABLE", "Core is gone");
    const cancel = await hostRequest(() => context.host.current, "cancelTurn");
    context.host.current.respond(cancel, { cancelled: true });
    expect(await responseOf(port, "x1")).toMatchObject({ ok: true });

    port.fromPage({ id: "s2", type: "sendText", payload: { sessionId: "session-aaaa", turnId: "t2", text: "again" } });
    const third = await hostRequest(() => context.host.current, "revokeFullAccess", 2);
    context.host.current.respond(third, { stoppedRuns: 1, endedSessions: 1 });
    const send = await hostRequest(() => context.host.current, "sendText");
    context.host.current.respond(send, { turnId: "t2" });
    expect(await responseOf(port, "s2")).toMatchObject({ ok: true });
    expect(await context.pendingRevocations.list()).toEqual({});
  });

  it("refuses Full Access after the grant was revoked, and claims a new grant after granting again", async () => {
    const context = await setup({ granted: [APP] });
    await context.revocations.revoke(APP);
    const revocation = await hostRequest(() => context.host.current, "revokeFullAccess");
    context.host.current.respond(revocation, { stoppedRuns: 0, endedSessions: 0 });
    await vi.waitFor(async () => expect(await context.pendingRevocations.list()).toEqual({}), waitOptions);
    const port = context.connect();
    port.fromPage({ id: "c1", type: "createSession", payload: { access: "full" } });
    expect(await responseOf(port, "c1")).toMatchObject({ ok: false, error: { code: "FULL_ACCESS_NOT_GRANTED" } });

    await context.grants.grant(APP);
    port.fromPage({ id: "c2", type: "createSession", payload: { access: "full" } });
    const create = await hostRequest(() => context.host.current, "createSession");
    expect(create.fullAccessClaim?.fullAccessGrantId).toBe("grant-2-abcdefghijklmnopq");
  });
});
