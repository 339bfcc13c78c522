#!/usr/bin/env node
import { AGENT_API_KEY_ENV, agentEventSchema, type AgentEvent } from "@pedelec/protocol/agent-wire";
import { locateCore } from "@pedelec/core-client/core-location";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { parseAgentOptions } from "./agent-options.js";
import { runAgentTurn, TurnFailure } from "./agent-turn.js";
import { ThreadBridge } from "@pedelec/core-client/thread-bridge";
import { MAX_TURN_MS_ENV } from "./turn-limits.js";

/**
 * `pedelec-agent run …`: one turn of Pedelec's own agent against an Ollama-compatible endpoint. Core runs it like any
 * provider CLI; stdout carries only agent-wire events, one JSON object per line, and diagnostics go to stderr.
 */

/** Overrides the 120 s wait for Ollama's next byte (milliseconds), for slow hardware or quick tests. */
const IDLE_TIMEOUT_ENV = "PEDELEC_OLLAMA_IDLE_TIMEOUT_MS";

function emit(event: AgentEvent): void {
  process.stdout.write(`${JSON.stringify(agentEventSchema.parse(event))}\n`);
}

function note(text: string): void {
  process.stderr.write(`pedelec-agent: ${text}\n`);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
}

async function main(): Promise<number> {
  // Read once and dropped from the environment, so nothing the agent starts can inherit it.
  const apiKey = process.env[AGENT_API_KEY_ENV] ?? "";
  delete process.env[AGENT_API_KEY_ENV];
  let bridge: ThreadBridge | null = null;
  try {
    const options = parseAgentOptions(process.argv.slice(2));
    if (apiKey.trim() === "") {
      throw new PedelecError(
        "OLLAMA_API_KEY_REQUIRED",
        `the endpoint's API key is missing: ${AGENT_API_KEY_ENV} is empty (set ollama.apiKey in Pedelec's settings)`,
      );
    }
    let prompt: string;
    try {
      prompt = await readStdin();
    } catch {
      throw new PedelecError("INVALID_INPUT", "the prompt on stdin is not UTF-8 text");
    }
    if (prompt.trim() === "") throw new PedelecError("INVALID_INPUT", "the prompt is empty: write it on stdin");
    const idleTimeout = process.env[IDLE_TIMEOUT_ENV];
    const maxTurnMs = process.env[MAX_TURN_MS_ENV];
    bridge = ThreadBridge.fromEnvironment(process.env);
    await runAgentTurn({
      options,
      prompt,
      apiKey,
      pedelecHome: locateCore(process.env).home,
      bridge,
      ...(idleTimeout !== undefined && /^[1-9][0-9]*$/.test(idleTimeout) ? { idleTimeoutMs: Number(idleTimeout) } : {}),
      ...(maxTurnMs !== undefined && /^[1-9][0-9]*$/.test(maxTurnMs) ? { maxTurnMs: Number(maxTurnMs) } : {}),
      emit,
      note,
    });
    return 0;
  } catch (error) {
    const failure = error instanceof TurnFailure ? error : new TurnFailure(PedelecError.from(error, "PROVIDER_FAILED"));
    if (!(error instanceof TurnFailure) && !(error instanceof PedelecError)) note(`unexpected failure: ${(error as Error)?.stack ?? String(error)}`);
    emit({ type: "turn-failed", error: scrub(failure.error.toWire(), apiKey), ...(failure.conversationLost ? { conversationLost: true } : {}) });
    return 1;
  } finally {
    bridge?.close();
  }
}

/** Belt and braces: whatever a server echoes back, the key never leaves this process in an event. */
function scrub<T extends { message: string; details?: unknown }>(error: T, apiKey: string): T {
  if (apiKey.length < 4) return error;
  if (!JSON.stringify(error).includes(apiKey)) return error;
  return { ...error, message: error.message.replaceAll(apiKey, "[redacted]"), details: undefined };
}

const exitCode = await main();
// Exit once stdout has taken the last event; open sockets (keep-alive, Core) must not hold the process.
process.stdout.write("", () => process.exit(exitCode));
