import { createServer, type Server, type Socket } from "node:net";
import { encodeFrame, FrameDecoder } from "@pedelec/protocol/frame-codec";

/** A request as a fake Core sees it on its socket. */
export interface FakeCoreRequest {
  id: string;
  type: string;
  payload: unknown;
}

/** What a fake Core answers a request with (`ok` and `result` or `error`), or undefined to leave it unanswered. */
export type FakeCoreAnswer = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } } | undefined;

/** A stand-in Core on a real Unix socket, for the clients' side of a hop. */
export interface FakeCoreSocket {
  /** Every well-formed request it received, in order. */
  readonly requests: FakeCoreRequest[];
  close(): Promise<void>;
}

const MAX_FRAME_BYTES = 1024 * 1024;

/** Listens on `socketPath` and answers each request with what `answer` returns for it. */
export async function startFakeCoreSocket(socketPath: string, answer: (request: FakeCoreRequest) => FakeCoreAnswer): Promise<FakeCoreSocket> {
  const requests: FakeCoreRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    const decoder = new FrameDecoder(MAX_FRAME_BYTES);
    socket.on("data", (chunk: Buffer) => {
      for (const decoded of decoder.push(chunk)) {
        if (!decoded.ok) continue;
        const request = decoded.message as FakeCoreRequest;
        requests.push(request);
        const reply = answer(request);
        if (reply !== undefined) socket.write(encodeFrame({ kind: "response", id: request.id, ...reply }, MAX_FRAME_BYTES));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
