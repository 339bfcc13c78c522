import { describe, expect, it } from "vitest";
import { PedelecError } from "./pedelec-error.js";
import { RequestClient, type MalformedRule, type ReadMessage } from "./request-client.js";
import { createLinkedTransportPair, type MessageTransport } from "./transport.js";

// A small hop for the tests: requests `{ id, type, payload }`, replies `{ id, ok, result | error }`, events `{ event }`.
interface TestRequest {
  id: string;
  type: string;
  payload?: unknown;
}
type TestMessage =
  | { id: string; ok: true; result: unknown }
  | { id: string; ok: false; error: { code: string; message: string } }
  | { event: string };

function readTestMessage(raw: unknown): ReadMessage<TestMessage> {
  const message = raw as Partial<{ id: unknown; ok: unknown; result: unknown; error: { code: string; message: string }; event: unknown }>;
  if (typeof message === "object" && message !== null && typeof message.event === "string")
    return { kind: "other", message: { event: message.event } };
  const id = typeof message === "object" && message !== null && typeof message.id === "string" ? message.id : undefined;
  if (id !== undefined && message.ok === true && "result" in message) {
    return { kind: "reply", id, message: { id, ok: true, result: message.result }, outcome: { ok: true, result: message.result } };
  }
  if (id !== undefined && message.ok === false && typeof message.error?.code === "string") {
    return {
      kind: "reply",
      id,
      message: { id, ok: false, error: message.error },
      outcome: { ok: false, error: PedelecError.from(message.error, "SDK_PROTOCOL_ERROR") },
    };
  }
  return { kind: "malformed", id, error: new PedelecError("SDK_PROTOCOL_ERROR", "malformed test message"), raw };
}

interface Setup {
  malformedMessage?: MalformedRule;
  malformedReply?: MalformedRule;
  timeoutMs?: number;
  transport?: (clientEnd: MessageTransport<unknown, TestRequest>) => MessageTransport<unknown, TestRequest>;
}

function setup(options: Setup = {}) {
  const [clientEnd, peer] = createLinkedTransportPair<unknown, TestRequest>();
  const received: TestRequest[] = [];
  const arrivals: (() => void)[] = [];
  peer.onMessage((request) => {
    received.push(request);
    for (const wake of arrivals.splice(0)) wake();
  });
  const others: TestMessage[] = [];
  const malformed: PedelecError[] = [];
  const closeCauses: (Error | undefined)[] = [];
  const closeErrors: PedelecError[] = [];
  let ids = 0;
  const client = new RequestClient<TestRequest, TestMessage>({
    transport: options.transport ? options.transport(clientEnd) : clientEnd,
    read: readTestMessage,
    onMessage: (message) => others.push(message),
    onMalformed: (error) => malformed.push(error),
    closeError: (cause) => {
      closeCauses.push(cause);
      return cause instanceof PedelecError ? cause : new PedelecError("IPC_UNAVAILABLE", `closed${cause ? `: ${cause.message}` : ""}`);
    },
    timeoutError: ({ label, timeoutMs }) => new PedelecError("SDK_BRIDGE_TIMEOUT", `${label} got no answer within ${timeoutMs} ms`),
    abortCode: "SDK_TRANSPORT_ERROR",
    malformedMessage: options.malformedMessage ?? "keep-connection",
    malformedReply: options.malformedReply ?? "keep-connection",
    timeoutMs: options.timeoutMs,
    createRequestId: () => `r${++ids}`,
  });
  client.onClose((error) => closeErrors.push(error));
  const ask = (type: string, extra: { check?: (result: unknown) => unknown; timeoutMs?: number; signal?: AbortSignal } = {}) =>
    client.request((id) => ({ id, type }), { label: type, ...extra });
  /** Resolves once the peer has received `count` requests in all (rejects past the deadline). */
  const peerReceived = (count: number, deadlineMs = 2_000): Promise<TestRequest[]> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the peer received ${received.length} of ${count} requests`)), deadlineMs);
      const check = (): void => {
        if (received.length >= count) {
          clearTimeout(timer);
          resolve(received.slice(0, count));
        } else {
          arrivals.push(check);
        }
      };
      check();
    });
  return { client, peer, received, others, malformed, closeCauses, closeErrors, ask, peerReceived };
}

/** Resolves once `predicate` holds, checking after every macrotask; rejects past the deadline. */
async function until(predicate: () => boolean, deadlineMs = 2_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe("RequestClient", () => {
  it("matches replies to their requests by id, whatever order they come back in", async () => {
    const { peer, ask, peerReceived } = setup();
    const first = ask("first");
    const second = ask("second");
    const third = ask("third");
    const [a, b, c] = await peerReceived(3);
    expect([a!.id, b!.id, c!.id]).toEqual(["r1", "r2", "r3"]);
    peer.send({ id: c!.id, ok: true, result: "three" });
    peer.send({ id: a!.id, ok: true, result: "one" });
    peer.send({ id: b!.id, ok: false, error: { code: "SESSION_BUSY", message: "busy" } });
    await expect(first).resolves.toBe("one");
    await expect(second).rejects.toMatchObject({ name: "PedelecError", code: "SESSION_BUSY", message: "busy" });
    await expect(third).resolves.toBe("three");
  });

  it("hands events and replies nobody waits for to onMessage", async () => {
    const { peer, others } = setup();
    peer.send({ event: "chat-delta" });
    peer.send({ id: "someone-else", ok: true, result: 1 });
    await until(() => others.length === 2);
    expect(others).toEqual([{ event: "chat-delta" }, { id: "someone-else", ok: true, result: 1 }]);
  });

  it("fails a request with the timeout error when its time is up, and ignores its late reply", async () => {
    const { client, peer, ask, peerReceived, others } = setup({ timeoutMs: 20 });
    const slow = ask("slow");
    const kept = ask("kept", { timeoutMs: 5_000 });
    await expect(slow).rejects.toMatchObject({ code: "SDK_BRIDGE_TIMEOUT", message: "slow got no answer within 20 ms" });
    const [late, other] = await peerReceived(2);
    peer.send({ id: late!.id, ok: true, result: "too late" });
    peer.send({ id: other!.id, ok: true, result: "in time" });
    await expect(kept).resolves.toBe("in time");
    // The late answer settled nothing: it is just a message nobody waits for.
    expect(others).toEqual([{ id: late!.id, ok: true, result: "too late" }]);
    expect(client.waitingCount).toBe(0);
    expect(client.closed).toBe(false);
  });

  it("holds a request's clock while it waits on something else, and restarts the whole timeout after", async () => {
    const { client, peer, ask, peerReceived } = setup({ timeoutMs: 30 });
    const held = ask("held");
    const [request] = await peerReceived(1);
    expect(client.holdTimeout(request!.id)).toBe(true);
    // Well past the timeout, the held request still waits.
    const later = ask("later");
    await expect(later).rejects.toMatchObject({ code: "SDK_BRIDGE_TIMEOUT" });
    expect(client.waitingCount).toBe(1);
    expect(client.restartTimeout(request!.id)).toBe(true);
    await expect(held).rejects.toMatchObject({ code: "SDK_BRIDGE_TIMEOUT", message: "held got no answer within 30 ms" });
    expect(client.holdTimeout(request!.id)).toBe(false);
    peer.send({ id: request!.id, ok: true, result: "gone" });
  });

  it("refuses a request whose signal already aborted, without sending it", async () => {
    const { ask, received, peerReceived } = setup();
    const controller = new AbortController();
    controller.abort(new Error("page left"));
    await expect(ask("never", { signal: controller.signal })).rejects.toMatchObject({ code: "SDK_TRANSPORT_ERROR", message: "page left" });
    void ask("sent");
    await peerReceived(1);
    expect(received.map((request) => request.type)).toEqual(["sent"]);
  });

  it("withdraws a sent request when its signal aborts; a PedelecError reason keeps its code; the late reply is ignored", async () => {
    const { client, peer, ask, peerReceived, others } = setup();
    const controller = new AbortController();
    const withdrawn = ask("withdrawn", { signal: controller.signal });
    const kept = ask("kept");
    const [first, second] = await peerReceived(2);
    controller.abort(new PedelecError("TURN_CANCELLED", "cancelled by the page"));
    await expect(withdrawn).rejects.toMatchObject({ code: "TURN_CANCELLED", message: "cancelled by the page" });
    peer.send({ id: first!.id, ok: true, result: "late" });
    peer.send({ id: second!.id, ok: true, result: "kept" });
    await expect(kept).resolves.toBe("kept");
    expect(others).toEqual([{ id: first!.id, ok: true, result: "late" }]);
    expect(client.waitingCount).toBe(0);
  });

  it("fails every waiting request with the close error when the other side closes, and every later one at once", async () => {
    const { client, peer, ask, peerReceived, closeCauses, closeErrors } = setup();
    const first = ask("first");
    const second = ask("second");
    await peerReceived(2);
    peer.close();
    await expect(first).rejects.toMatchObject({ code: "IPC_UNAVAILABLE", message: "closed" });
    await expect(second).rejects.toMatchObject({ code: "IPC_UNAVAILABLE", message: "closed" });
    await expect(ask("after")).rejects.toMatchObject({ code: "IPC_UNAVAILABLE" });
    expect(client.closed).toBe(true);
    expect(closeCauses).toEqual([undefined]);
    expect(closeErrors).toHaveLength(1);
  });

  it("passes the transport's own error to the close error", async () => {
    let breakLink: (error: Error) => void = () => undefined;
    const { ask, peerReceived, closeCauses } = setup({
      transport: (inner) => {
        const listeners = new Set<(error?: Error) => void>();
        const closeAll = (error?: Error): void => {
          for (const listener of listeners) listener(error);
        };
        inner.onClose(closeAll);
        breakLink = closeAll;
        return {
          send: (request) => inner.send(request),
          close: () => inner.close(),
          onMessage: (listener) => inner.onMessage(listener),
          onClose: (listener) => {
            listeners.add(listener);
            return () => listeners.delete(listener);
          },
        };
      },
    });
    const pending = ask("pending");
    await peerReceived(1);
    breakLink(new Error("EPIPE"));
    await expect(pending).rejects.toMatchObject({ code: "IPC_UNAVAILABLE", message: "closed: EPIPE" });
    expect(closeCauses.map((cause) => cause?.message)).toEqual(["EPIPE"]);
  });

  it("closing from this side fails waiting requests and tells the other side", async () => {
    const { client, peer, ask, peerReceived } = setup();
    const pending = ask("pending");
    await peerReceived(1);
    let peerClosed = false;
    peer.onClose(() => (peerClosed = true));
    client.close();
    await expect(pending).rejects.toMatchObject({ code: "IPC_UNAVAILABLE" });
    await until(() => peerClosed);
  });

  it("answers a reply that fails its check with a coded error and keeps the connection when the hop says so", async () => {
    const { client, peer, ask, peerReceived } = setup({ malformedReply: "keep-connection" });
    const isNumber = (result: unknown): number => {
      if (typeof result !== "number") throw new Error("not a number");
      return result;
    };
    const bad = ask("bad", { check: isNumber });
    const good = ask("good", { check: isNumber });
    const [first, second] = await peerReceived(2);
    peer.send({ id: first!.id, ok: true, result: "seven" });
    await expect(bad).rejects.toMatchObject({ code: "SDK_PROTOCOL_ERROR", message: "not a number" });
    peer.send({ id: second!.id, ok: true, result: 7 });
    await expect(good).resolves.toBe(7);
    expect(client.closed).toBe(false);
  });

  it("closes the connection over a reply that fails its check when the hop says so", async () => {
    const { client, peer, ask, peerReceived, closeErrors } = setup({ malformedReply: "close-connection" });
    const bad = ask("bad", {
      check: () => {
        throw new PedelecError("INVALID_INPUT", "wrong shape");
      },
    });
    const bystander = ask("bystander");
    const [first] = await peerReceived(2);
    peer.send({ id: first!.id, ok: true, result: {} });
    await expect(bad).rejects.toMatchObject({ code: "INVALID_INPUT", message: "wrong shape" });
    // Every other waiting request fails with what the connection was closed for.
    await expect(bystander).rejects.toMatchObject({ code: "INVALID_INPUT", message: "wrong shape" });
    expect(client.closed).toBe(true);
    expect(closeErrors.map((error) => error.code)).toEqual(["INVALID_INPUT"]);
  });

  it("fails the request a malformed message names, reports one naming none, and keeps the connection", async () => {
    const { client, peer, ask, peerReceived, malformed } = setup({ malformedMessage: "keep-connection" });
    const named = ask("named");
    const later = ask("later");
    const [first, second] = await peerReceived(2);
    peer.send({ id: first!.id, ok: "yes" } as never);
    await expect(named).rejects.toMatchObject({ code: "SDK_PROTOCOL_ERROR" });
    peer.send("garbage" as never);
    await until(() => malformed.length === 1);
    peer.send({ id: second!.id, ok: true, result: "fine" });
    await expect(later).resolves.toBe("fine");
    expect(client.closed).toBe(false);
  });

  it("closes over a malformed message when the hop says the stream can no longer be trusted", async () => {
    const { client, peer, ask, peerReceived } = setup({ malformedMessage: "close-connection" });
    const pending = ask("pending");
    await peerReceived(1);
    peer.send(42 as never);
    await expect(pending).rejects.toMatchObject({ code: "SDK_PROTOCOL_ERROR", message: "malformed test message" });
    expect(client.closed).toBe(true);
  });

  it("fails only the one request when the transport refuses its frame with a PedelecError", async () => {
    const { client, peer, ask, peerReceived } = setup({
      transport: (inner) => ({
        onMessage: (listener) => inner.onMessage(listener),
        onClose: (listener) => inner.onClose(listener),
        close: () => inner.close(),
        send(request) {
          if (request.type === "huge") throw new PedelecError("MESSAGE_TOO_LARGE", "too large");
          inner.send(request);
        },
      }),
    });
    await expect(ask("huge")).rejects.toMatchObject({ code: "MESSAGE_TOO_LARGE" });
    const fine = ask("fine");
    const [request] = await peerReceived(1);
    peer.send({ id: request!.id, ok: true, result: "ok" });
    await expect(fine).resolves.toBe("ok");
    expect(client.closed).toBe(false);
  });

  it("treats any other throw from the transport as a lost connection", async () => {
    let broken = false;
    const { client, ask, closeCauses } = setup({
      transport: (inner) => ({
        onMessage: (listener) => inner.onMessage(listener),
        onClose: (listener) => inner.onClose(listener),
        close: () => inner.close(),
        send(request) {
          if (broken) throw new Error("Attempting to use a disconnected port object");
          inner.send(request);
        },
      }),
    });
    const first = ask("first");
    broken = true;
    await expect(ask("second")).rejects.toMatchObject({ code: "IPC_UNAVAILABLE", message: "closed: Attempting to use a disconnected port object" });
    await expect(first).rejects.toMatchObject({ code: "IPC_UNAVAILABLE" });
    expect(client.closed).toBe(true);
    expect(closeCauses).toHaveLength(1);
  });

  it("fails every waiting request on demand and stays open", async () => {
    const { client, peer, ask, peerReceived } = setup();
    const first = ask("first");
    const second = ask("second");
    await peerReceived(2);
    client.failWaiting(new PedelecError("CORE_RUNTIME_UNAVAILABLE", "Core went away"));
    await expect(first).rejects.toMatchObject({ code: "CORE_RUNTIME_UNAVAILABLE" });
    await expect(second).rejects.toMatchObject({ code: "CORE_RUNTIME_UNAVAILABLE" });
    const third = ask("third");
    const [, , request] = await peerReceived(3);
    peer.send({ id: request!.id, ok: true, result: 3 });
    await expect(third).resolves.toBe(3);
  });

  it("makes unique ids with a random prefix when the hop brings no id maker", async () => {
    const [clientEnd, peer] = createLinkedTransportPair<unknown, TestRequest>();
    const seen: string[] = [];
    peer.onMessage((request) => seen.push(request.id));
    const options = {
      transport: clientEnd,
      read: readTestMessage,
      closeError: () => new PedelecError("IPC_UNAVAILABLE", "closed"),
      abortCode: "SDK_TRANSPORT_ERROR" as const,
      malformedMessage: "keep-connection" as const,
      malformedReply: "keep-connection" as const,
    };
    const one = new RequestClient<TestRequest, TestMessage>(options);
    void one.request((id) => ({ id, type: "a" })).catch(() => undefined);
    void one.request((id) => ({ id, type: "b" })).catch(() => undefined);
    await until(() => seen.length === 2);
    expect(seen[0]).toMatch(/^[0-9a-f]{8}-1$/);
    expect(seen[1]).toBe(seen[0]!.replace(/-1$/, "-2"));
    one.close();
  });
});
