import { connect, type Socket } from "node:net";
import { encodeFrame, encodeJsonFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";
import type { CoreServerFrame } from "@pedelec/protocol/core-wire";

/** A frame Core sent, with the size it had on the wire. */
export interface ReceivedFrame {
  frame: CoreServerFrame;
  bytes: number;
}

/**
 * A client of Core's socket that writes whatever bytes a test wants (half frames, bad UTF-8, floods) and records
 * each frame Core sends back, for tests of what Core does with hostile or broken clients.
 */
export class RawCoreSocket {
  readonly received: ReceivedFrame[] = [];
  readonly closed: Promise<void>;
  readonly #socket: Socket;
  readonly #decoder = new FrameDecoder(64 * 1024 * 1024);
  readonly #wakers = new Set<() => void>();
  #isClosed = false;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on("data", (chunk: Buffer) => {
      for (const decoded of this.#decoder.push(chunk)) {
        // Core never sends a broken frame; should it, the test sees the connection close without the frame it awaits.
        if (!decoded.ok) {
          socket.destroy();
          return;
        }
        this.received.push({ frame: decoded.message as CoreServerFrame, bytes: 4 + Buffer.byteLength(JSON.stringify(decoded.message)) });
      }
      this.#wake();
    });
    socket.on("error", () => undefined);
    this.closed = new Promise((resolve) =>
      socket.on("close", () => {
        this.#isClosed = true;
        this.#wake();
        resolve();
      }),
    );
  }

  static open(socketPath: string): Promise<RawCoreSocket> {
    return new Promise((resolve, reject) => {
      const socket = connect(socketPath);
      socket.once("connect", () => resolve(new RawCoreSocket(socket)));
      socket.once("error", reject);
    });
  }

  get isClosed(): boolean {
    return this.#isClosed;
  }

  /** Writes bytes and resolves once the kernel took them (so a test can pace a slow client). */
  write(bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.#socket.write(bytes, (error) => (error ? reject(error) : resolve())));
  }

  writeFrame(message: unknown): Promise<void> {
    return this.write(encodeFrame(message, 64 * 1024 * 1024));
  }

  /** Frames JSON text as is (a value too deep for JSON.stringify can still be written by hand). */
  writeJson(json: string): Promise<void> {
    return this.write(encodeJsonFrame(json, 64 * 1024 * 1024));
  }

  /** Waits for a frame Core sent that matches, up to a deadline. */
  async nextFrame(match: (frame: CoreServerFrame) => boolean, timeoutMs = 10_000): Promise<ReceivedFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find((received) => match(received.frame));
      if (found) return found;
      if (this.#isClosed)
        throw new Error(`the socket closed without such a frame; got ${JSON.stringify(this.received.map((received) => received.frame))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wakers.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves when Core closes the connection, or rejects after the deadline. */
  async closedWithin(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Core did not close the connection within ${timeoutMs} ms`)), timeoutMs);
    });
    await Promise.race([this.closed, late]).finally(() => clearTimeout(timer));
  }

  destroy(): void {
    this.#socket.destroy();
  }

  #wake(): void {
    for (const wake of [...this.#wakers]) wake();
    this.#wakers.clear();
  }
}
