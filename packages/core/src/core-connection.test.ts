import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CoreServerFrame } from "@pedelec/protocol/core-wire";
import { MAX_JSON_DEPTH, MAX_WIRE_JSON_DEPTH } from "@pedelec/protocol/json-limits";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore, type RunningCore } from "./core-daemon.js";
import { capabilityOfHangingAgent } from "./testing/agent-capability.js";
import { RawCoreSocket } from "./testing/raw-core-socket.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const tools = [
  {
    name: "take",
    description: "Takes anything",
    argsSchema: { type: "object" as const, properties: { anything: { type: "object" as const } } },
    timeoutMs: 60_000,
  },
];

let home: string;
let core: RunningCore | undefined;
const closers: (() => void)[] = [];

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-connection-"));
  core = await startCore({
    ...process.env,
    PEDELEC_HOME: home,
    PEDELEC_PROVIDER_PATH: standInDir,
    CLAUDE_CONFIG_DIR: join(home, "claude-state"),
  });
});
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await core?.stop();
  core = undefined;
  await rm(home, { recursive: true, force: true });
});

async function openRaw(): Promise<RawCoreSocket> {
  const socket = await RawCoreSocket.open(core!.paths.socketPath);
  closers.push(() => socket.destroy());
  return socket;
}

async function openClient(): Promise<CoreConnection> {
  const connection = await CoreConnection.open(core!.paths.socketPath);
  closers.push(() => connection.close());
  return connection;
}

/** `{"a":{"a":…}}`, built without recursion. */
function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
}

function nestedJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

/** An argsSchema with `levels` object schemas nested through `properties`. */
function nestedArgsSchema(levels: number): unknown {
  let schema: unknown = { type: "string" };
  for (let level = 0; level < levels; level += 1) schema = { type: "object", properties: { next: schema } };
  return schema;
}

const responseTo = (id: string) => (frame: CoreServerFrame) => frame.kind === "response" && frame.id === id;

/** A session with a turn hanging in the stand-in agent, and the agent's side of the socket. */
async function sessionWithAgent() {
  const page = await openClient();
  const envelopes: SessionEventEnvelope[] = [];
  page.onFrame((frame) => {
    if (frame.kind === "event") envelopes.push(frame.envelope);
  });
  const { sessionId, workspace } = await page.request("createSession", { provider: "claude", skills: { guidance: "", tools } }, ORIGIN);
  await page.request("sendText", { sessionId, turnId: "turn-1", text: "hang" }, ORIGIN);
  const capability = await capabilityOfHangingAgent(workspace.path);
  const agent = await openClient();
  const callTool = (argsJson: string) => agent.request("toolCall", { threadId: sessionId, capability, toolName: "take", argsJson });
  const nextRequested = async (count: number) => {
    await expect.poll(() => envelopes.filter((envelope) => envelope.event.type === "tool-call-requested").length, { timeout: 10_000 }).toBe(count);
    return envelopes.filter((envelope) => envelope.event.type === "tool-call-requested")[count - 1]!;
  };
  return { page, agent, sessionId, envelopes, callTool, nextRequested };
}

describe("Core's receiving edge", () => {
  it("refuses a frame body that is not UTF-8 and closes only that connection", async () => {
    const healthy = await openClient();
    const raw = await openRaw();
    const body = Buffer.concat([
      Buffer.from('{"kind":"request","id":"r1","type":"ping","payload":{"x":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}}'),
    ]);
    const header = Buffer.alloc(4);
    header.writeUInt32LE(body.length, 0);
    await raw.write(Buffer.concat([header, body]));
    const fatal = await raw.nextFrame((frame) => frame.kind === "fatal");
    expect(fatal.frame).toMatchObject({ error: { code: "INVALID_INPUT", message: expect.stringMatching(/not valid UTF-8: .*not valid/) as string } });
    await raw.closedWithin(5_000);
    await expect(healthy.request("ping", {})).resolves.toMatchObject({ pid: process.pid });
  });

  it("answers a payload nested deeper than the wire limit with INVALID_INPUT for its id, and serves the next request", async () => {
    const raw = await openRaw();
    await raw.writeJson(`{"kind":"request","id":"deep","type":"ping","payload":${nestedJson(8_000)}}`);
    const answer = await raw.nextFrame(responseTo("deep"));
    expect(answer.frame).toMatchObject({
      ok: false,
      error: { code: "INVALID_INPUT", message: expect.stringContaining(`nests deeper than ${MAX_WIRE_JSON_DEPTH} levels`) as string },
    });
    expect(answer.bytes).toBeLessThan(4096);
    await raw.writeFrame({ kind: "request", id: "after", type: "ping", payload: {} });
    expect((await raw.nextFrame(responseTo("after"))).frame).toMatchObject({ ok: true });
  });

  it("keeps the error about 100,000 unknown keys under 4 KiB, in a payload or in the frame itself", async () => {
    const raw = await openRaw();
    const keys = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`unknown_${index}`, index]));
    await raw.writeFrame({ kind: "request", id: "keys", type: "createSession", origin: ORIGIN, payload: keys });
    const inPayload = await raw.nextFrame(responseTo("keys"));
    expect(inPayload.frame).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    expect(inPayload.bytes).toBeLessThan(4096);
    await raw.writeFrame({ kind: "request", id: "frame-keys", type: "ping", payload: {}, ...keys });
    const inFrame = await raw.nextFrame(responseTo("frame-keys"));
    expect(inFrame.frame).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    expect(inFrame.bytes).toBeLessThan(4096);
  });

  it("answers an argsSchema nested too deep with INVALID_INPUT at createSession", async () => {
    const page = await openClient();
    const create = (levels: number) =>
      page.request(
        "createSession",
        { provider: "claude", skills: { guidance: "", tools: [{ name: "deep", description: "d", argsSchema: nestedArgsSchema(levels) as never }] } },
        ORIGIN,
      );
    // 1,500 levels stop at the wire limit; 34 levels (68 JSON levels) pass it and stop at the value limit.
    await expect(create(1_500)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining(`deeper than ${MAX_WIRE_JSON_DEPTH}`) as string,
    });
    await expect(create(34)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining(`deeper than ${MAX_JSON_DEPTH}`) as string,
    });
    await expect(create(20)).resolves.toMatchObject({ toolNames: ["deep"] });
  });

  it("answers 8,000-deep tool arguments with TOOL_ARGS_INVALID at once, and the page never sees them", async () => {
    const { callTool, envelopes } = await sessionWithAgent();
    const started = Date.now();
    await expect(callTool(`{"anything":${nestedJson(8_000)}}`)).rejects.toMatchObject({
      code: "TOOL_ARGS_INVALID",
      message: expect.stringContaining(`nests deeper than ${MAX_JSON_DEPTH} levels`) as string,
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(envelopes.some((envelope) => envelope.event.type === "tool-call-requested")).toBe(false);
  });

  it("answers tool arguments that would outgrow a frame with TOOL_ARGS_INVALID", async () => {
    const { callTool } = await sessionWithAgent();
    // 2.4 MB of text; written out again each 1e20 takes 21 digits, some 8.8 MB.
    const inflating = `{"anything":{"list":[${new Array(400_000).fill("1e20").join(",")}]}}`;
    await expect(callTool(inflating)).rejects.toMatchObject({
      code: "TOOL_ARGS_INVALID",
      message: expect.stringContaining("bytes as JSON") as string,
    });
  });

  it("answers a tool result nested too deep with INVALID_INPUT at once, and takes a good one after it", async () => {
    const { page, sessionId, callTool, nextRequested } = await sessionWithAgent();
    const call = callTool('{"anything":{}}');
    const requested = await nextRequested(1);
    const toolRequestId = (requested.event as { toolRequestId: string }).toolRequestId;
    const submit = (result: unknown) =>
      page.request("submitToolResult", { sessionId, toolRequestId, outcome: { ok: true, result: result as never } }, ORIGIN);
    await expect(submit(nested(1_000))).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(submit(nested(MAX_JSON_DEPTH + 1))).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining(`deeper than ${MAX_JSON_DEPTH}`) as string,
    });
    await expect(submit({ done: true })).resolves.toEqual({ accepted: true });
    await expect(call).resolves.toEqual({ result: { done: true } });
  });

  it("leaves no gap in the session's seq when tool calls are refused", async () => {
    const { callTool, envelopes, nextRequested } = await sessionWithAgent();
    await expect(callTool(`{"anything":${nestedJson(8_000)}}`)).rejects.toMatchObject({ code: "TOOL_ARGS_INVALID" });
    await expect(callTool(`{"anything":{"list":[${new Array(400_000).fill("1e20").join(",")}]}}`)).rejects.toMatchObject({
      code: "TOOL_ARGS_INVALID",
    });
    void callTool('{"anything":{"fine":true}}').catch(() => undefined);
    await nextRequested(1);
    expect(envelopes.map((envelope) => envelope.seq)).toEqual(envelopes.map((_, index) => index + 1));
  });
});
