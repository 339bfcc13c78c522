import { describe, expect, it, vi } from "vitest";
import { ApprovalStore } from "./approval-store.js";
import { FullAccessGrantStore } from "./full-access-grants.js";
import { FullAccessRevocations } from "./full-access-revocations.js";
import { NativeLink } from "./native-link.js";
import { PENDING_REVOCATIONS_KEY, RevocationStore } from "./revocation-store.js";
import { FakeNativeHost, MemoryStorage } from "./testing/fakes.js";

const A = "https://a.example";
const B = "https://b.example";
const waitOptions = { timeout: 2000, interval: 2 };

async function setup() {
  const storage = new MemoryStorage();
  let clock = 1000;
  const now = () => clock;
  const approvedOrigins = new ApprovalStore(storage, { now });
  const grants = new FullAccessGrantStore(storage, approvedOrigins, { now });
  for (const origin of [A, B]) {
    await approvedOrigins.approve(origin);
    await grants.grant(origin);
  }
  const host = new FakeNativeHost();
  const warnings: string[] = [];
  const logger = { warn: (code: string) => void warnings.push(code) };
  const link = new NativeLink({ connect: host.connect, logger });
  const pending = new RevocationStore(storage);
  let changes = 0;
  const revocations = new FullAccessRevocations({
    link,
    grants,
    pending,
    now,
    logger,
    onChange: () => {
      changes += 1;
    },
  });
  return {
    storage,
    grants,
    host,
    link,
    pending,
    revocations,
    warnings,
    changes: () => changes,
    setClock: (value: number) => {
      clock = value;
    },
  };
}

type Context = Awaited<ReturnType<typeof setup>>;

/** Waits until the current native channel carries `count` revokeFullAccess frames, and returns them. */
function revocationFrames(context: Context, count: number) {
  return vi.waitFor(() => {
    const frames = context.host.current.requests("revokeFullAccess");
    if (frames.length < count) throw new Error(`${frames.length} of ${count} revocations sent`);
    return frames;
  }, waitOptions);
}

/** Whether `promise` has settled after the queued work ran; for asserting that something is still waiting. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  const markDone = (): void => {
    done = true;
  };
  promise.then(markDone, markDone);
  await new Promise((resolve) => setTimeout(resolve, 20));
  return done;
}

describe("FullAccessRevocations", () => {
  it("stores the revocation, drops the grant, sends it at once and forgets it when Core confirms", async () => {
    const context = await setup();
    await context.revocations.revoke(A);
    expect(context.storage.values.get(PENDING_REVOCATIONS_KEY)).toEqual({ [A]: 1000 });
    expect(await context.grants.grantFor(A)).toBeUndefined();
    expect(await context.grants.grantFor(B)).toBeDefined();
    const [frame] = await revocationFrames(context, 1);
    expect(frame).toMatchObject({ kind: "request", type: "revokeFullAccess", origin: A, payload: { revokedAt: 1000 } });
    context.host.current.respond(frame!, { stoppedRuns: 2, endedSessions: 1 });
    await vi.waitFor(() => expect(context.storage.values.get(PENDING_REVOCATIONS_KEY)).toEqual({}), waitOptions);
    expect(context.changes()).toBe(1);
  });

  it("keeps a revocation Core could not get, and sends it again before the next request", async () => {
    const context = await setup();
    await context.revocations.revoke(A);
    await revocationFrames(context, 1);
    context.host.current.die("Specified native messaging host not found.");
    await vi.waitFor(() => expect(context.warnings).toContain("NATIVE_HOST_UNAVAILABLE"), waitOptions);
    expect(await context.pending.list()).toEqual({ [A]: 1000 });

    const before = context.revocations.beforeRequest(A);
    await vi.waitFor(() => expect(context.host.channels).toHaveLength(2), waitOptions);
    const [again] = await revocationFrames(context, 1);
    expect(await settled(before)).toBe(false);
    context.host.current.respond(again!, { stoppedRuns: 0, endedSessions: 0 });
    await expect(before).resolves.toBeUndefined();
    expect(await context.pending.list()).toEqual({});
  });

  it("refuses a request of the same origin with the delivery's error, but never holds up another origin", async () => {
    const context = await setup();
    await context.revocations.revoke(A);
    await revocationFrames(context, 1);
    context.host.current.hello();
    context.host.current.fail(context.host.current.requests("revokeFullAccess")[0]!, "CORE_RUNTIME_UNAVAILABLE", "Core is gone");
    await vi.waitFor(() => expect(context.warnings).toContain("CORE_RUNTIME_UNAVAILABLE"), waitOptions);

    // B goes ahead at once, even though A's revocation is sent again first and never answered.
    await expect(context.revocations.beforeRequest(B)).resolves.toBeUndefined();
    const frames = await revocationFrames(context, 2);
    expect(frames[1]).toMatchObject({ origin: A });

    // A waits for that same delivery (no second send) and gets its error.
    const forA = context.revocations.beforeRequest(A);
    expect(await settled(forA)).toBe(false);
    expect(context.host.current.requests("revokeFullAccess")).toHaveLength(2);
    context.host.current.fail(frames[1]!, "CORE_RUNTIME_UNAVAILABLE", "Core is still gone");
    await expect(forA).rejects.toMatchObject({ code: "CORE_RUNTIME_UNAVAILABLE", message: "Core is still gone" });
    expect(await context.pending.list()).toEqual({ [A]: 1000 });

    // Requests that only stop things go ahead even for A.
    const stopping = context.revocations.beforeRequest(A, { proceedOnFailure: true });
    const [, , third] = await revocationFrames(context, 3);
    context.host.current.fail(third!, "CORE_RUNTIME_UNAVAILABLE", "Core is still gone");
    await expect(stopping).resolves.toBeUndefined();
  });

  it("sends stored revocations when the native link reopens", async () => {
    const context = await setup();
    await context.revocations.revoke(A);
    await revocationFrames(context, 1);
    context.host.current.hello();
    context.host.current.die("Native host has exited.");
    await vi.waitFor(() => expect(context.warnings).toContain("NATIVE_CONNECTION_CLOSED"), waitOptions);

    // Any request reopens the link; the revocation follows on the new connection without being asked.
    void context.link.request("listProviders", B, {}).catch(() => undefined);
    expect(context.host.channels).toHaveLength(2);
    const [frame] = await revocationFrames(context, 1);
    expect(frame).toMatchObject({ origin: A, payload: { revokedAt: 1000 } });
    context.host.current.respond(frame!, { stoppedRuns: 0, endedSessions: 0 });
    await vi.waitFor(async () => expect(await context.pending.list()).toEqual({}), waitOptions);
  });

  it("never sends two revocations of one origin at once, and sends a later one after the first is confirmed", async () => {
    const context = await setup();
    await context.revocations.revoke(A);
    await revocationFrames(context, 1);
    const waiting = [context.revocations.beforeRequest(A), context.revocations.deliverAll(), context.revocations.beforeRequest(B)];
    context.setClock(5000);
    await context.revocations.revoke(A);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(context.host.current.requests("revokeFullAccess")).toHaveLength(1);

    context.host.current.respond(context.host.current.requests("revokeFullAccess")[0]!, { stoppedRuns: 0, endedSessions: 0 });
    const [, later] = await revocationFrames(context, 2);
    expect(later).toMatchObject({ origin: A, payload: { revokedAt: 5000 } });
    expect(await context.pending.list()).toEqual({ [A]: 5000 });
    context.host.current.respond(later!, { stoppedRuns: 0, endedSessions: 0 });
    await Promise.all(waiting);
    expect(await context.pending.list()).toEqual({});
  });

  it("stores nothing and sends nothing when the revocation cannot be stored", async () => {
    const context = await setup();
    context.storage.failWrites = true;
    await expect(context.revocations.revoke(A)).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    context.storage.failWrites = false;
    expect(await context.grants.grantFor(A)).toBeDefined();
    expect(context.host.channels).toHaveLength(0);
    context.storage.failReads = true;
    await expect(context.revocations.beforeRequest(A)).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    await expect(context.revocations.beforeRequest(A, { proceedOnFailure: true })).resolves.toBeUndefined();
  });
});
