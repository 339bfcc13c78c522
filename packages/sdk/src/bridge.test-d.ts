import { describe, expectTypeOf, it } from "vitest";
import type { AssetEntry } from "@pedelec/protocol/assets";
import type { SessionInfo } from "@pedelec/protocol/requests";
import type { Bridge, BridgeAnswer } from "./bridge.js";
import type { StandInCoreHandlers } from "./testing-kit/stand-in-core.js";

declare const bridge: Bridge;

describe("the bridge, keyed by the page request table", () => {
  it("gives each request its table's result type", () => {
    expectTypeOf(bridge.request("listAssets", { sessionId: "s" })).toEqualTypeOf<Promise<BridgeAnswer<AssetEntry[]>>>();
    expectTypeOf(bridge.request("resumeSession", { sessionId: "s", afterSeq: 3 })).toEqualTypeOf<Promise<BridgeAnswer<SessionInfo>>>();
    expectTypeOf(bridge.request("claimToolCall", { sessionId: "s", toolRequestId: "t" })).resolves.toEqualTypeOf<
      BridgeAnswer<{ claimed: boolean }>
    >();
  });

  it("refuses a wrong payload or a type outside the table", () => {
    // @ts-expect-error -- sendText needs a turn id and a text
    void bridge.request("sendText", { sessionId: "s" });
    // @ts-expect-error -- the extension sets the claimant; a page's payload has none
    void bridge.request("claimToolCall", { sessionId: "s", toolRequestId: "t", claimant: "route-1" });
    // @ts-expect-error -- only the extension subscribes a route
    void bridge.request("subscribeSession", { sessionId: "s" });
    // The escape hatch takes any name and answers unknown.
    expectTypeOf(bridge.requestAnyType("someFutureRequest", { a: 1 })).toEqualTypeOf<Promise<BridgeAnswer>>();
  });
});

describe("the stand-in desktop's handlers, keyed by the same table", () => {
  it("does not compile without an answer for every request", () => {
    type WithoutListAssets = Omit<StandInCoreHandlers, "listAssets">;
    // @ts-expect-error -- listAssets has no answer
    expectTypeOf<WithoutListAssets>().toEqualTypeOf<StandInCoreHandlers>();
    const handlers = {} as WithoutListAssets;
    // @ts-expect-error -- a handler table missing listAssets is not the stand-in's handler table
    const incomplete: StandInCoreHandlers = handlers;
    void incomplete;
  });

  it("types each handler's payload and result by its request", () => {
    expectTypeOf<Parameters<StandInCoreHandlers["sendText"]>[0]>().toEqualTypeOf<{ sessionId: string; turnId: string; text: string }>();
    expectTypeOf<ReturnType<StandInCoreHandlers["cancelTurn"]>["result"]>().toEqualTypeOf<{ cancelled: boolean }>();
    const wrongResult: StandInCoreHandlers["cancelTurn"] = () => ({
      // @ts-expect-error -- cancelTurn answers whether it cancelled, as a boolean
      result: { cancelled: "yes" },
    });
    void wrongResult;
  });
});
