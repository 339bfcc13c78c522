import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { performance } from "node:perf_hooks";
import type { ModelReply, ModelRequest, ModelServer, ScriptedReply } from "./model-server-types.js";
import { uniqueIds } from "./unique-ids.js";
import type { WireFormat } from "./wire-format.js";
import { writeReply } from "./write-reply.js";

/** What the server answers when a request finds the script empty: a visible failure, not a retry storm. */
export const NO_SCRIPTED_REPLY = "(the model server has no scripted reply for this request)";

/** The short title every title request gets. */
export const SCRIPTED_TITLE_DELTAS = ["Scripted", " session"];

interface Waiter {
  count: number;
  resolve(requests: readonly ModelRequest[]): void;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Starts an HTTP server on 127.0.0.1 (a free port) that answers the model requests of one wire format from a script:
 * every request is logged, each one that is not a title request takes the next scripted reply.
 */
export async function startScriptedModelServer(format: WireFormat): Promise<ModelServer> {
  const requests: ModelRequest[] = [];
  const queue: ScriptedReply[] = [];
  const waiters = new Set<Waiter>();
  const sockets = new Set<Socket>();
  const nextId = uniqueIds();
  const turns = () => requests.filter((request) => request.purpose === "turn");

  function chooseReply(request: ModelRequest): ModelReply {
    if (request.purpose === "title") return { kind: "text", deltas: SCRIPTED_TITLE_DELTAS };
    const scripted = queue.shift();
    if (scripted === undefined) return { kind: "text", deltas: [NO_SCRIPTED_REPLY] };
    if (typeof scripted !== "function") return scripted;
    try {
      return scripted(request);
    } catch (error) {
      return { kind: "error", status: 500, message: `the scripted reply function threw: ${String(error)}` };
    }
  }

  function log(request: ModelRequest): void {
    requests.push(request);
    const count = turns().length;
    for (const waiter of waiters) {
      if (count < waiter.count) continue;
      waiters.delete(waiter);
      waiter.resolve(turns());
    }
  }

  async function answer(incoming: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = incoming.method ?? "GET";
    const path = incoming.url ?? "/";
    const pathname = new URL(path, "http://127.0.0.1").pathname;
    const text = await readBody(incoming);
    if (method !== "POST" || pathname !== format.modelPath) {
      response.writeHead(format.otherRequestStatus?.(method, pathname) ?? 404).end();
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(format.errorBody(400, "the body is not JSON")));
      return;
    }
    const request: ModelRequest = {
      path,
      method,
      headers: incoming.headers,
      body,
      ...format.readRequest(body),
      purpose: format.isTitleRequest?.(body) === true ? "title" : "turn",
      receivedAt: performance.now(),
    };
    log(request);
    writeReply(response, chooseReply(request), format, { request, nextId });
  }

  const server = createServer((incoming, response) => {
    answer(incoming, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" });
      response.end(`model server failure: ${String(error)}`);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}${format.basePath}`,
    requests,
    script: (...replies) => void queue.push(...replies),
    dropScript: () => void queue.splice(0),
    waitForRequests(count, timeoutMs = 30_000) {
      if (turns().length >= count) return Promise.resolve(turns());
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          count,
          resolve: (found) => {
            clearTimeout(timer);
            resolve(found);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`waited ${timeoutMs} ms for ${count} model request(s); ${turns().length} arrived`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
