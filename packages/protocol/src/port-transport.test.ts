import { describe, expect, it } from "vitest";
import { portTransport, type PortLike } from "./port-transport.js";

/** Behaves like one end of a Chrome port: posting after a disconnect throws; a disconnect is reported to the other end only. */
class FakePort implements PortLike {
  readonly posted: unknown[] = [];
  disconnected = false;
  readonly #messageListeners: ((message: unknown) => void)[] = [];
  readonly #disconnectListeners: (() => void)[] = [];
  readonly onMessage = { addListener: (listener: (message: unknown) => void) => void this.#messageListeners.push(listener) };
  readonly onDisconnect = { addListener: (listener: () => void) => void this.#disconnectListeners.push(listener) };

  postMessage(message: unknown): void {
    if (this.disconnected) throw new Error("Attempting to use a disconnected port object");
    this.posted.push(message);
  }

  disconnect(): void {
    this.disconnected = true;
  }

  fromOtherEnd(message: unknown): void {
    for (const listener of this.#messageListeners) listener(message);
  }

  closedByOtherEnd(): void {
    this.disconnected = true;
    for (const listener of this.#disconnectListeners) listener();
  }
}

describe("portTransport", () => {
  it("sends and receives through the port", () => {
    const port = new FakePort();
    const transport = portTransport(port);
    const received: unknown[] = [];
    transport.onMessage((message) => received.push(message));
    transport.send({ id: "1" });
    port.fromOtherEnd({ id: "1", ok: true });
    expect(port.posted).toEqual([{ id: "1" }]);
    expect(received).toEqual([{ id: "1", ok: true }]);
  });

  it("reads lastError inside the disconnect callback and reports it as the close error", () => {
    const port = new FakePort();
    let lastError: string | undefined = "Native host has exited.";
    const transport = portTransport(port, () => lastError);
    const errors: (Error | undefined)[] = [];
    transport.onClose((error) => errors.push(error));
    port.closedByOtherEnd();
    lastError = undefined;
    expect(errors.map((error) => error?.message)).toEqual(["Native host has exited."]);
    expect(() => transport.send({})).toThrow(/disconnected/);
  });

  it("closing from this side disconnects the port and tells this side's listeners, once", () => {
    const port = new FakePort();
    const transport = portTransport(port);
    const errors: (Error | undefined)[] = [];
    transport.onClose((error) => errors.push(error));
    transport.close();
    transport.close();
    expect(port.disconnected).toBe(true);
    expect(errors).toEqual([undefined]);
    const received: unknown[] = [];
    transport.onMessage((message) => received.push(message));
    port.fromOtherEnd("after close");
    expect(received).toEqual([]);
  });

  it("lets a throwing postMessage through, so the caller can tell a lost port", () => {
    const port = new FakePort();
    const transport = portTransport(port);
    port.disconnected = true; // Chrome has not reported the disconnect yet.
    expect(() => transport.send({})).toThrow("Attempting to use a disconnected port object");
  });
});
