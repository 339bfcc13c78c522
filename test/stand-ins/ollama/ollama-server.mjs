#!/usr/bin/env node
/*
 * A stand-in for an Ollama server, for tests: the native API's `GET /api/tags`, `POST /api/show` and a streaming
 * `POST /api/chat`, with the line shapes Ollama sends (see README.md for where each comes from). It listens on
 * 127.0.0.1 only and never touches the network or a model.
 *
 * What `/api/chat` does is chosen by the content of the LAST user or tool message. For a user message, the text after
 * the last line that is exactly `[User Message]` counts (Core's first prompt puts the user's words there), or the
 * whole content. A line `slow <ms>` anywhere waits that long before each streamed chunk; otherwise the first line that
 * matches a directive wins:
 *
 *   reply: <text>              answer <text>, streamed in pieces of a few characters
 *   call-tool <name> <json>    call the tool with those arguments; once its result comes back (the last message is a
 *                              tool message), answer "tool said: <the tool message's content>"
 *   plan: <json array>         a scripted multi-round turn, one step per model request, advanced by tool results;
 *                              a step is {"reply": text} or {"say"?: text, "call"?: {name, arguments}, "calls"?: [...],
 *                              "callsInDoneChunk"?: true}; past the last step it answers "plan finished"
 *   always-call <name> <json>  call that tool in every round, forever (for round limits)
 *   many-calls <n> <name> <json>
 *                              hostile: one answer with <n> calls of the tool, one streamed chunk each; every `{n}` in a
 *                              string of <json> becomes the call's number (1…n). Once tool results are back it answers
 *                              "tool results: <how many tool messages follow the assistant's calls>"
 *   always-many-calls <n> <name> <json>
 *                              the same <n> calls in every round, forever
 *   string-arguments <name> <text>
 *                              hostile: one call whose `arguments` is the string <text>, not an object; then as call-tool
 *   endless-text               hostile: streams content pieces as fast as the client reads them and never ends
 *   fail-401 | fail-403        401 / 403 with {"error":"unauthorized"} / {"error":"forbidden"}
 *   fail-404-model             404 {"error":"model \"<model>\" not found, try pulling it first"}
 *   fail-404-path              404 "404 page not found" (plain text, as Ollama's router answers an unknown path)
 *   fail-500                   500 {"error":"llama runner process has terminated: exit status 2"}
 *   garbage                    200, one good chunk, then a line that is not JSON
 *   wrong-shape                200, a JSON line that is not a chat chunk
 *   stream-error               200, one good chunk, then {"error":"..."} as Ollama reports a failure mid-stream
 *   no-done                    200, a few chunks, then a clean end without the done:true chunk
 *   cut                        200, a few chunks, then the connection is dropped mid-stream
 *   hang                       200 with headers and one chunk, then nothing until the client goes away
 *   (anything else)            answer "echo: <the text>"
 *
 * An unknown model gets 404 {"error":"model \"x\" not found, try pulling it first"}; with `apiKey` set, a request
 * without `Authorization: Bearer <apiKey>` gets 401 {"error":"unauthorized"}.
 *
 * For tests: `startOllamaServer({ models?, apiKey? })` → `{ url, requests, close() }`; every request is recorded as
 * `{ method, path, headers, body, state }` where `state` goes from "open" to "finished" (the server ended the
 * response) or "aborted" (the client closed the connection first). By hand: `node ollama-server.mjs --port 0
 * [--model name]… [--api-key key]` prints the URL.
 */
import http from "node:http";
import { pathToFileURL } from "node:url";

const USER_MESSAGE_MARKER = "[User Message]";
const DEFAULT_MODELS = ["qwen3:latest"];

function canonicalModel(name) {
  return name.includes(":") ? name : `${name}:latest`;
}

function piecesOf(text, size = 4) {
  const characters = Array.from(text);
  const pieces = [];
  for (let index = 0; index < characters.length; index += size) pieces.push(characters.slice(index, index + size).join(""));
  return pieces.length === 0 ? [""] : pieces;
}

function delay(milliseconds) {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** The message that drives this answer, and the messages since the user message that started the turn. */
function drivingMessage(messages) {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role === "user" || message?.role === "tool") return { message, index };
  }
  return { message: undefined, index: -1 };
}

function userTextOf(content) {
  const lines = String(content ?? "").split(/\r?\n/);
  const marker = lines.lastIndexOf(USER_MESSAGE_MARKER);
  return (marker === -1 ? lines : lines.slice(marker + 1)).join("\n").trim();
}

function lastUserIndex(messages) {
  for (let index = messages.length - 1; index >= 0; index -= 1) if (messages[index]?.role === "user") return index;
  return -1;
}

function parseToolDirective(rest) {
  const match = /^(\S+)\s*(.*)$/s.exec(rest.trim());
  if (match === null) return { name: "missing", arguments: {} };
  let parsedArguments = {};
  try {
    parsedArguments = match[2] === "" ? {} : JSON.parse(match[2]);
  } catch {
    parsedArguments = { unparsed: match[2] };
  }
  return { name: match[1], arguments: parsedArguments };
}

/** Decides what one /api/chat request gets: an error, a broken stream, or a list of assistant rounds to stream. */
function planAnswer(messages) {
  const { message } = drivingMessage(messages);
  const userIndex = lastUserIndex(messages);
  const userText = userTextOf(messages[userIndex]?.content);
  const lines = userText.split(/\r?\n/);
  const slowLine = lines.map((line) => /^slow\s+(\d+)\s*$/.exec(line.trim())).find((match) => match !== null);
  const slowMs = slowLine ? Number(slowLine[1]) : 0;
  const lastIsTool = message?.role === "tool";

  for (const rawLine of lines) {
    const line = rawLine.trim();
    if (line.startsWith("reply:")) return { slowMs, round: { text: line.slice("reply:".length).trim() } };
    if (line.startsWith("call-tool ")) {
      if (lastIsTool) return { slowMs, round: { text: `tool said: ${message.content}` } };
      return { slowMs, round: { calls: [parseToolDirective(line.slice("call-tool ".length))] } };
    }
    if (line.startsWith("always-call ")) return { slowMs, round: { calls: [parseToolDirective(line.slice("always-call ".length))] } };
    const many = /^(always-)?many-calls\s+(\d+)\s+(.*)$/s.exec(line);
    if (many) {
      if (lastIsTool && many[1] === undefined) return { slowMs, round: { text: `tool results: ${trailingToolMessages(messages)}` } };
      const call = parseToolDirective(many[3]);
      const count = Number(many[2]);
      return {
        slowMs,
        round: {
          calls: Array.from({ length: count }, (_, index) => ({ name: call.name, arguments: numbered(call.arguments, index + 1) })),
          oneChunkPerCall: true,
        },
      };
    }
    if (line.startsWith("string-arguments ")) {
      if (lastIsTool) return { slowMs, round: { text: `tool said: ${message.content}` } };
      const match = /^(\S+)\s*(.*)$/s.exec(line.slice("string-arguments ".length).trim());
      return { slowMs, round: { calls: [{ name: match?.[1] ?? "missing", arguments: match?.[2] ?? "" }] } };
    }
    if (line === "endless-text") return { slowMs, failure: "endless-text" };
    if (line.startsWith("plan:")) {
      let steps;
      try {
        steps = JSON.parse(line.slice("plan:".length));
      } catch {
        return { slowMs, round: { text: "the plan is not JSON" } };
      }
      // Each earlier step that called tools has left one or more tool results; count rounds by assistant messages.
      const roundsDone = messages.slice(userIndex + 1).filter((entry) => entry?.role === "assistant").length;
      const step = Array.isArray(steps) ? steps[roundsDone] : undefined;
      if (step === undefined) return { slowMs, round: { text: "plan finished" } };
      if (typeof step.reply === "string") return { slowMs, round: { text: step.reply } };
      const calls = step.calls ?? (step.call ? [step.call] : []);
      return { slowMs, round: { text: step.say ?? "", calls, callsInDoneChunk: step.callsInDoneChunk === true } };
    }
    const failure = /^(fail-401|fail-403|fail-404-model|fail-404-path|fail-500|garbage|wrong-shape|stream-error|no-done|cut|hang)$/.exec(line);
    if (failure) return { slowMs, failure: failure[1] };
  }
  const text = lastIsTool ? `tool said: ${message.content}` : `echo: ${userText}`;
  return { slowMs, round: { text } };
}

/** How many tool messages end the conversation (the results of the last answer's calls). */
function trailingToolMessages(messages) {
  let count = 0;
  for (let index = messages.length - 1; index >= 0 && messages[index]?.role === "tool"; index -= 1) count += 1;
  return count;
}

/** The value with every `{n}` in its strings replaced by `number`. */
function numbered(value, number) {
  if (typeof value === "string") return value.replaceAll("{n}", String(number));
  if (Array.isArray(value)) return value.map((item) => numbered(item, number));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, numbered(item, number)]));
  return value;
}

function approximateTokens(messages) {
  return Math.max(1, Math.ceil(messages.reduce((total, entry) => total + String(entry?.content ?? "").length, 0) / 4));
}

/**
 * Starts the server on 127.0.0.1 at `port` (0: any free port).
 * @param {{ port?: number, models?: string[], apiKey?: string }} [options]
 */
export async function startOllamaServer(options = {}) {
  const models = (options.models ?? DEFAULT_MODELS).map(canonicalModel);
  const requests = [];
  const sockets = new Set();

  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body = text;
      try {
        body = text === "" ? null : JSON.parse(text);
      } catch {
        // Kept as text; the handler answers 400.
      }
      const record = { method: request.method, path: request.url, headers: { ...request.headers }, body, state: "open" };
      requests.push(record);
      response.on("finish", () => {
        if (record.state === "open") record.state = "finished";
      });
      response.on("close", () => {
        if (record.state === "open") record.state = "aborted";
      });
      handle(record, response).catch((error) => {
        process.stderr.write(`ollama stand-in: ${error?.stack ?? error}\n`);
        response.destroy();
      });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  const sendJson = (response, status, value) => {
    const payload = JSON.stringify(value);
    response.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(payload) });
    response.end(payload);
  };

  async function handle(record, response) {
    if (options.apiKey !== undefined && record.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendJson(response, 401, { error: "unauthorized" });
    }
    if (record.method === "GET" && record.path === "/api/tags") {
      return sendJson(response, 200, {
        models: models.map((name) => ({
          name,
          model: name,
          modified_at: "2025-05-27T22:54:58.100509Z",
          size: 5225388164,
          digest: "500a1f067a9f782620b40bee6f7b0c89e17ae61f686b92c24933e4ca4b2b8b41",
          details: { parent_model: "", format: "gguf", family: "qwen3", families: ["qwen3"], parameter_size: "8.2B", quantization_level: "Q4_K_M" },
        })),
      });
    }
    if (record.method === "GET" && record.path === "/api/version") return sendJson(response, 200, { version: "0.12.6" });
    if (record.method === "POST" && record.path === "/api/show") {
      const name = typeof record.body?.model === "string" ? canonicalModel(record.body.model) : "";
      if (!models.includes(name)) return sendJson(response, 404, { error: `model '${record.body?.model ?? ""}' not found` });
      return sendJson(response, 200, {
        modelfile: `FROM ${name}\n`,
        parameters: "temperature 0.6\ntop_k 20\ntop_p 0.95",
        template: "{{ .Prompt }}",
        details: { parent_model: "", format: "gguf", family: "qwen3", families: ["qwen3"], parameter_size: "8.2B", quantization_level: "Q4_K_M" },
        model_info: { "general.architecture": "qwen3", "qwen3.context_length": 40960 },
        capabilities: ["completion", "tools", "thinking"],
        modified_at: "2025-05-27T22:54:58.100509Z",
      });
    }
    if (record.method === "POST" && record.path === "/api/chat") return chat(record, response);
    response.writeHead(404, { "Content-Type": "text/plain" });
    response.end("404 page not found");
  }

  async function chat(record, response) {
    const body = record.body;
    if (body === null || typeof body !== "object" || !Array.isArray(body.messages) || typeof body.model !== "string") {
      return sendJson(response, 400, { error: "invalid request: model and messages are required" });
    }
    const model = canonicalModel(body.model);
    if (!models.includes(model)) return sendJson(response, 404, { error: `model "${body.model}" not found, try pulling it first` });
    const answer = planAnswer(body.messages);
    const chunkLine = (message, extra = {}) =>
      `${JSON.stringify({ model: body.model, created_at: new Date().toISOString(), message: { role: "assistant", content: "", ...message }, done: false, ...extra })}\n`;
    const doneLine = (evalCount, message = {}) =>
      `${JSON.stringify({
        model: body.model,
        created_at: new Date().toISOString(),
        message: { role: "assistant", content: "", ...message },
        done_reason: "stop",
        done: true,
        total_duration: 885095291,
        load_duration: 3753500,
        prompt_eval_count: approximateTokens(body.messages),
        prompt_eval_duration: 328493000,
        eval_count: evalCount,
        eval_duration: 552222000,
      })}\n`;
    const write = async (line) => {
      if (answer.slowMs > 0) await delay(answer.slowMs);
      if (response.destroyed) return false;
      response.write(line);
      return true;
    };

    switch (answer.failure) {
      case "fail-401":
        return sendJson(response, 401, { error: "unauthorized" });
      case "fail-403":
        return sendJson(response, 403, { error: "forbidden" });
      case "fail-404-model":
        return sendJson(response, 404, { error: `model "${body.model}" not found, try pulling it first` });
      case "fail-404-path":
        response.writeHead(404, { "Content-Type": "text/plain" });
        return response.end("404 page not found");
      case "fail-500":
        return sendJson(response, 500, { error: "llama runner process has terminated: exit status 2" });
      default:
        break;
    }

    response.writeHead(200, { "Content-Type": "application/x-ndjson" });
    response.flushHeaders();
    switch (answer.failure) {
      case "garbage":
        await write(chunkLine({ content: "Hel" }));
        await write("this is not JSON\n");
        return response.end();
      case "wrong-shape":
        await write(`${JSON.stringify({ model: body.model, message: { role: "assistant", content: 42 }, done: "maybe" })}\n`);
        return response.end();
      case "stream-error":
        await write(chunkLine({ content: "Hel" }));
        await write(`${JSON.stringify({ error: "an error was encountered while running the model: unexpected EOF" })}\n`);
        return response.end();
      case "no-done":
        for (const piece of piecesOf("this stream ends early")) await write(chunkLine({ content: piece }));
        return response.end();
      case "cut":
        for (const piece of piecesOf("this stream is cut")) await write(chunkLine({ content: piece }));
        // Let the chunks reach the client, then drop the connection without the terminating chunk.
        await delay(20);
        return response.socket?.destroy();
      case "hang":
        await write(chunkLine({ content: "Hel" }));
        return; // Nothing more, ever; the response closes only when the client goes away.
      case "endless-text": {
        const line = chunkLine({ content: "lorem ipsum " });
        // As fast as the client takes it (waiting for the socket to drain), until it goes away.
        while (!response.destroyed) {
          if (!(await write(line))) return;
          if (response.writableNeedDrain) await new Promise((resolve) => response.once("drain", resolve).once("close", resolve));
        }
        return;
      }
      default:
        break;
    }

    const { round } = answer;
    const pieces = round.text ? piecesOf(round.text) : [];
    if (body.think === true) await write(chunkLine({ thinking: "Let me think about that." }));
    for (const piece of pieces) if (!(await write(chunkLine({ content: piece })))) return;
    const calls = (round.calls ?? []).map((call) => ({ function: { name: call.name, arguments: call.arguments ?? {} } }));
    if (calls.length > 0 && round.callsInDoneChunk) {
      await write(doneLine(pieces.length + 1, { tool_calls: calls }));
    } else {
      if (calls.length > 0 && round.oneChunkPerCall) {
        for (const call of calls) {
          if (!(await write(chunkLine({ tool_calls: [call] })))) return;
          if (response.writableNeedDrain) await new Promise((resolve) => response.once("drain", resolve).once("close", resolve));
        }
      } else if (calls.length > 0) await write(chunkLine({ tool_calls: calls }));
      // After a streamed tool call Ollama may send a separate, empty done:true chunk.
      await write(doneLine(pieces.length + calls.length));
    }
    response.end();
  }

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const address = server.address();
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2);
  const options = { port: 0, models: [] };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const value = argv[index + 1];
    if (value === undefined) {
      process.stderr.write(`${flag} needs a value\nUsage: node ollama-server.mjs [--port n] [--model name]… [--api-key key]\n`);
      process.exit(2);
    }
    index += 1;
    if (flag === "--port") options.port = Number(value);
    else if (flag === "--model") options.models.push(value);
    else if (flag === "--api-key") options.apiKey = value;
    else {
      process.stderr.write(`unknown option ${flag}\nUsage: node ollama-server.mjs [--port n] [--model name]… [--api-key key]\n`);
      process.exit(2);
    }
  }
  if (options.models.length === 0) delete options.models;
  const running = await startOllamaServer(options);
  process.stdout.write(`${running.url}\n`);
}
