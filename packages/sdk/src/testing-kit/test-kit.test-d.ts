import { describe, expectTypeOf, it } from "vitest";
import type { JsonValue, Pedelec, PedelecError } from "../index.js";
import {
  createPedelecTestKit,
  type PedelecTestKit,
  type ScriptedTurn,
  type ScriptedTurnEnd,
  type TestKitSessionInfo,
  type TestKitToolCall,
} from "./index.js";

describe("the testing kit's public types", () => {
  it("gives a real client and a typed agent script", () => {
    const kit = createPedelecTestKit({ approval: "pending", providers: { codex: "not signed in", ollama: false } });
    expectTypeOf(kit).toEqualTypeOf<PedelecTestKit>();
    expectTypeOf(kit.pedelec).toEqualTypeOf<Pedelec>();
    expectTypeOf(kit.createClient({ name: "tab-2" })).toEqualTypeOf<Pedelec>();
    expectTypeOf(kit.sessions).toEqualTypeOf<TestKitSessionInfo[]>();
    expectTypeOf(kit.toolCalls).toEqualTypeOf<TestKitToolCall[]>();
    kit.agent.onTurn(async (turn) => {
      expectTypeOf(turn).toEqualTypeOf<ScriptedTurn>();
      expectTypeOf(turn.callTool("add_note", { title: "x" })).toEqualTypeOf<Promise<JsonValue>>();
      expectTypeOf(turn.callTool<{ id: string }>("add_note", {})).toEqualTypeOf<Promise<{ id: string }>>();
      expectTypeOf(turn.finished).toEqualTypeOf<Promise<ScriptedTurnEnd>>();
      turn.fail("PROVIDER_FAILED", "boom");
      // @ts-expect-error a code outside the catalogue
      turn.fail("PROVIDER_CRASHED");
      // @ts-expect-error deltas are text
      turn.delta(42);
      expectTypeOf(turn.usage({ inputTokens: 10, outputTokens: 2 })).toEqualTypeOf<void>();
      // @ts-expect-error counts are numbers
      turn.usage({ inputTokens: "10" });
    });
    expectTypeOf(kit.agent.nextTurn()).toEqualTypeOf<Promise<ScriptedTurn>>();
  });

  it("types onRequest handlers by the request type", () => {
    const kit = createPedelecTestKit();
    kit.onRequest("listAssets", (payload) => {
      expectTypeOf(payload.sessionId).toEqualTypeOf<string>();
      return [{ name: "a.txt", path: "/a.txt", sizeBytes: 1, modifiedAt: "2025-01-01T00:00:00.000Z" }];
    });
    // @ts-expect-error listProviders answers an array of providers
    kit.onRequest("listProviders", () => ({ providers: [] }));
    // @ts-expect-error not a page request
    kit.onRequest("toolCall", () => null);
  });

  it("settles a finished turn with a PedelecError", () => {
    const end = {} as ScriptedTurnEnd;
    if (!end.ok) expectTypeOf(end.error).toEqualTypeOf<PedelecError>();
  });
});
