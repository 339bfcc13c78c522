import { describe, expect, it } from "vitest";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { ProviderAdapter, ProviderCapabilities, ProviderTurnRequest } from "./providers/provider-adapter.js";
import { Session } from "./session.js";
import { scriptedSessionSetup } from "./testing/scripted-session.js";

/** A session over a scripted provider that records each turn request and answers with one whole message. */
function sessionWith(capabilities: ProviderCapabilities) {
  const requests: ProviderTurnRequest[] = [];
  const published: SessionEventEnvelope[] = [];
  const adapter = {
    displayName: "Scripted",
    capabilities,
    runTurn: async (request: ProviderTurnRequest, onEvent: (event: unknown) => void) => {
      requests.push(request);
      onEvent({ type: "provider-session-started", providerSessionId: `conversation-${requests.length}` });
      onEvent({ type: "message-completed", messageId: `m${requests.length}`, text: `answer ${requests.length}` });
      return { ok: true };
    },
  } as unknown as ProviderAdapter;
  const setup = scriptedSessionSetup(adapter, published, "Guide the board.");
  const session = new Session(setup);
  const turn = async (turnId: string, text: string) => {
    const completed = published.filter((envelope) => envelope.event.type === "turn-completed").length;
    session.startTurn(turnId, text);
    await expect.poll(() => published.filter((envelope) => envelope.event.type === "turn-completed").length).toBe(completed + 1);
  };
  return { requests, published, turn };
}

describe("Session acts on the provider's capabilities", () => {
  it("resumes the conversation on later turns, and the first prompt goes only to the first", async () => {
    const { requests, turn } = sessionWith({ textDeltas: true, resume: true });
    await turn("t1", "hello");
    await turn("t2", "again");
    expect(requests.map((request) => request.providerSessionId)).toEqual([null, "conversation-1"]);
    expect(requests[0]?.prompt).toContain("Guide the board.");
    expect(requests[1]?.prompt).toBe("again");
    expect(requests.map((request) => request.access)).toEqual(["sandbox", "sandbox"]);
  });

  it("gives a provider that cannot resume a fresh conversation with the whole first prompt every turn", async () => {
    const { requests, turn } = sessionWith({ textDeltas: true, resume: false });
    await turn("t1", "hello");
    await turn("t2", "again");
    expect(requests.map((request) => request.providerSessionId)).toEqual([null, null]);
    expect(requests[1]?.prompt).toContain("Guide the board.");
    expect(requests[1]?.prompt).toContain("again");
  });

  it("hands a provider's whole message to pages as one delta when it streams none, and only then", async () => {
    const withoutDeltas = sessionWith({ textDeltas: false, resume: true });
    await withoutDeltas.turn("t1", "hello");
    const events = withoutDeltas.published.map((envelope) => envelope.event).filter((event) => event.type.startsWith("chat-"));
    expect(events).toEqual([
      { type: "chat-delta", turnId: "t1", messageId: "m1", delta: "answer 1" },
      { type: "chat-completed", turnId: "t1", messageId: "m1", text: "answer 1" },
    ]);
    const withDeltas = sessionWith({ textDeltas: true, resume: true });
    await withDeltas.turn("t1", "hello");
    expect(withDeltas.published.some((envelope) => envelope.event.type === "chat-delta")).toBe(false);
  });
});
