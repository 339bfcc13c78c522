// The kit claims to behave like the desktop runtime. Here the same turns run through Core's own Session (with a
// scripted provider and a page that answers through Session's claim/submit calls) and through the kit (with a real
// SDK page), and the events each sends must match: order, statuses, tool outcomes, error codes, joined deltas. A change
// in Core's ordering fails this test until the kit follows it.
import { afterEach, describe, expect, it } from "vitest";
import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { TokenUsage } from "@pedelec/protocol/token-usage";
import type { ToolManifestEntry } from "@pedelec/protocol/tool-schema";
import type { ProviderAdapter, ProviderEvent, ProviderTurnOutcome } from "@pedelec/core/providers/provider-adapter";
import { Session } from "@pedelec/core/session";
import { scriptedSessionSetup } from "@pedelec/core/testing/scripted-session";
import { ToolRegistry } from "@pedelec/core/tool-registry";
import type { PedelecSession } from "../pedelec-session.js";
import { createPedelecTestKit, type PedelecTestKit } from "./index.js";

type Step =
  | { delta: string }
  | { activity: string }
  | { message: string }
  /** The provider's usage of the turn so far. */
  | { usage: TokenUsage }
  /** The agent calls the tool; the page answers it, or (for the last step) stops the turn instead. */
  | { tool: "answered" | "timed-out" };

type Ending = "complete" | { fail: ErrorCode } | "page-cancels-during-tool" | "page-ends-during-tool";

interface Scenario {
  name: string;
  kind?: "user" | "prepare";
  /**
   * Whether the provider streams deltas (default true). The kit sends a message that had no deltas as one delta too,
   * as Core does for a provider that does not stream; such scenarios run Core with one.
   */
  streams?: boolean;
  steps: Step[];
  ending: Ending;
}

const tool: ToolManifestEntry = {
  name: "add_note",
  description: "Add a note.",
  argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
  timeoutMs: 40,
};

const scenarios: Scenario[] = [
  {
    name: "a turn that streams, reports activity, calls a tool and completes",
    steps: [{ delta: "Hel" }, { delta: "lo" }, { delta: " there" }, { activity: "Reading" }, { tool: "answered" }, { message: "Hello there" }],
    ending: "complete",
  },
  { name: "two messages", steps: [{ delta: "One" }, { message: "One" }, { delta: "Two" }, { message: "Two" }], ending: "complete" },
  { name: "a turn that fails with a code", steps: [{ delta: "Trying" }], ending: { fail: "PROVIDER_FAILED" } },
  {
    name: "a tool call that times out, then the turn goes on",
    streams: false,
    steps: [{ tool: "timed-out" }, { message: "Gave up" }],
    ending: "complete",
  },
  { name: "the page cancels while a tool call waits", steps: [{ delta: "Working" }, { tool: "answered" }], ending: "page-cancels-during-tool" },
  { name: "the page ends the session while a tool call waits", steps: [{ tool: "answered" }], ending: "page-ends-during-tool" },
  { name: "a prepare turn", kind: "prepare", streams: false, steps: [{ message: "Ready." }], ending: "complete" },
  {
    name: "a turn that reports its usage as it goes, once with a lower count",
    steps: [
      { usage: { inputTokens: 1_200, cachedInputTokens: 1_000 } },
      { delta: "Hi" },
      { usage: { inputTokens: 1_200, cachedInputTokens: 1_000, outputTokens: 5 } },
      { usage: { inputTokens: 1_100, outputTokens: 3 } },
      { activity: "Thinking" },
      { usage: { inputTokens: 1_200, cachedInputTokens: 1_000, outputTokens: 9, totalTokens: 1_209 } },
      { message: "Hi" },
    ],
    ending: "complete",
  },
];

/** What must match, event by event. */
function normalize(envelopes: readonly SessionEventEnvelope[]): string[] {
  return envelopes.map(({ event }) => {
    switch (event.type) {
      case "status-changed":
        return `status-changed ${event.status}`;
      case "turn-started":
      case "turn-completed":
        return `${event.type} ${event.turnKind}`;
      case "turn-failed":
        return `turn-failed ${event.turnKind} ${event.error.code}`;
      case "chat-delta":
        return `chat-delta ${JSON.stringify(event.delta)}`;
      case "chat-completed":
        return `chat-completed ${JSON.stringify(event.text)}`;
      case "activity-updated":
        return `activity-updated ${event.activity.title}`;
      case "usage-updated":
        return `usage-updated ${JSON.stringify(event.usage)} ${JSON.stringify(event.sessionUsage)}`;
      case "artifact-created":
        return `artifact-created ${event.artifact.path} ${event.artifact.kind}`;
      case "tool-call-requested":
        return `tool-call-requested ${event.toolName} ${JSON.stringify(event.args)}`;
      case "tool-call-settled":
        return `tool-call-settled ${event.outcome}`;
      case "session-ended":
        return `session-ended ${event.reason}`;
      case "error-reported":
        return `error-reported ${event.error.code}`;
    }
    const unknownEvent: never = event;
    throw new Error(`unknown event: ${JSON.stringify(unknownEvent)}`);
  });
}

const isLastTool = (scenario: Scenario, index: number): boolean => scenario.steps.slice(index + 1).every((step) => !("tool" in step));

/** Whether the page answers the tool step at `index` (it stops the turn instead at the last one of a stopping scenario). */
function pageAnswers(scenario: Scenario, index: number): boolean {
  const step = scenario.steps[index];
  if (step === undefined || !("tool" in step) || step.tool === "timed-out") return false;
  return !(typeof scenario.ending === "string" && scenario.ending.startsWith("page-") && isLastTool(scenario, index));
}

function isOver(envelopes: readonly SessionEventEnvelope[], ending: Ending): boolean {
  const types = envelopes.map((envelope) => envelope.event.type);
  if (ending === "page-ends-during-tool") return types.includes("session-ended");
  return types.includes("turn-completed") || types.includes("turn-failed");
}

async function runOnCore(scenario: Scenario): Promise<string[]> {
  const published: SessionEventEnvelope[] = [];
  const pageErrors: unknown[] = [];
  let session!: Session;
  let toolStep = -1;
  const adapter = {
    code: "claude",
    displayName: "Scripted",
    programName: "scripted",
    capabilities: { textDeltas: scenario.streams ?? true, resume: true },
    runTurn: async (request: { signal: AbortSignal }, onEvent: (event: ProviderEvent) => void): Promise<ProviderTurnOutcome> => {
      const stopped = new Promise<ProviderTurnOutcome>((resolve) => {
        request.signal.addEventListener("abort", () => resolve({ ok: false, error: PedelecError.from(request.signal.reason, "TURN_CANCELLED") }), {
          once: true,
        });
      });
      for (const [index, step] of scenario.steps.entries()) {
        if (request.signal.aborted) return stopped;
        if ("delta" in step) onEvent({ type: "text-delta", messageId: messageIdFor(scenario, index), delta: step.delta });
        else if ("activity" in step)
          onEvent({ type: "activity", activity: { id: `a${index}`, kind: "other", status: "completed", title: step.activity } });
        else if ("message" in step) onEvent({ type: "message-completed", messageId: messageIdFor(scenario, index), text: step.message });
        else if ("usage" in step) onEvent({ type: "usage", usage: step.usage });
        else {
          toolStep = index;
          await session.callTool("add_note", JSON.stringify({ title: `call ${index}` }), request.signal).catch(() => undefined);
        }
      }
      if (request.signal.aborted) return stopped;
      if (scenario.ending === "complete") return { ok: true };
      if (typeof scenario.ending === "object") return { ok: false, error: new PedelecError(scenario.ending.fail, "the agent failed") };
      return stopped;
    },
  } as unknown as ProviderAdapter;
  const setup = scriptedSessionSetup(adapter, published);
  session = new Session({
    ...setup,
    tools: new ToolRegistry([tool]),
    publish: (envelope) => {
      published.push(envelope);
      const { event } = envelope;
      if (event.type !== "tool-call-requested") return;
      // The page: claims the call, then answers it, or stops the turn instead, as the kit's page does.
      queueMicrotask(() => {
        try {
          session.claimToolCall(event.toolRequestId, "page");
          if (pageAnswers(scenario, toolStep)) {
            session.submitToolResult(event.toolRequestId, { ok: true, result: { saved: true } }, "page");
          } else if (scenario.ending === "page-cancels-during-tool") {
            void session.cancelTurn();
          } else if (scenario.ending === "page-ends-during-tool") {
            void session.end("requested");
          }
        } catch (error) {
          pageErrors.push(error);
        }
      });
    },
  });
  if (scenario.kind === "prepare") session.prepare("turn-1");
  else session.startTurn("turn-1", "go");
  await expect.poll(() => isOver(published, scenario.ending), { timeout: 2_000 }).toBe(true);
  expect(pageErrors).toEqual([]);
  return normalize(published);
}

/** Consecutive deltas and the message completing them share one id, as the kit's current message does. */
function messageIdFor(scenario: Scenario, index: number): string {
  let start = index;
  while (start > 0 && "delta" in (scenario.steps[start - 1] ?? {})) start -= 1;
  return start === index ? `m${index}` : `m${start}`;
}

const kits: PedelecTestKit[] = [];
afterEach(async () => {
  await Promise.all(kits.splice(0).map((kit) => kit.dispose()));
});

async function runOnKit(scenario: Scenario): Promise<string[]> {
  const kit = createPedelecTestKit({ toolTimeoutMs: 1_000 });
  kits.push(kit);
  let page!: PedelecSession<string>;
  kit.agent.onTurn(async (turn) => {
    for (const [index, step] of scenario.steps.entries()) {
      if ("delta" in step) turn.delta(step.delta);
      else if ("activity" in step) turn.activity({ id: `a${index}`, title: step.activity });
      else if ("message" in step) turn.message(step.message);
      else if ("usage" in step) turn.usage(step.usage);
      else await turn.callTool("add_note", { title: `call ${index}` }).catch(() => undefined);
    }
    if (typeof scenario.ending === "object") turn.fail(scenario.ending.fail, "the agent failed");
    else if (scenario.ending === "complete") turn.complete();
  });
  page = await kit.pedelec.createSession({ skills: { guidance: "", tools: [tool] } });
  page.onTool("add_note", (args) => {
    const index = Number((args as { title: string }).title.replace("call ", ""));
    if (pageAnswers(scenario, index)) return { saved: true };
    if (scenario.ending === "page-cancels-during-tool") void page.cancel();
    if (scenario.ending === "page-ends-during-tool") void page.end();
    return new Promise(() => undefined);
  });
  const done = scenario.kind === "prepare" ? page.prepare() : page.sendText("go");
  await done.catch(() => undefined);
  await expect.poll(() => isOver(kit.events(page.sessionId), scenario.ending), { timeout: 2_000 }).toBe(true);
  return normalize(kit.events(page.sessionId));
}

describe("the kit sends what Core's Session sends", () => {
  it.each(scenarios.map((scenario) => [scenario.name, scenario] as const))("%s", async (_name, scenario) => {
    const [core, kit] = [await runOnCore(scenario), await runOnKit(scenario)];
    expect(kit).toEqual(core);
    expect(core.length).toBeGreaterThan(3);
  });
});
