import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { describe, expect, it } from "vitest";
import { createOwnTurn, settleOwnTurn } from "./own-turn.js";

describe("a handle's own turn", () => {
  it("settles its caller's promise once", async () => {
    const { turn, completion } = createOwnTurn("user", "t1");
    settleOwnTurn(turn);
    settleOwnTurn(turn, new PedelecError("TURN_CANCELLED", "too late"));
    expect(turn.settled).toBe(true);
    await expect(completion).resolves.toBeUndefined();
  });

  it("rejects a user turn with its error, and a prepare turn with PREPARE_FAILED unless busy or ended", async () => {
    const user = createOwnTurn("user", "t1");
    settleOwnTurn(user.turn, new PedelecError("PROVIDER_FAILED", "no"));
    await expect(user.completion).rejects.toMatchObject({ code: "PROVIDER_FAILED" });
    const prepare = createOwnTurn("prepare", "p1");
    settleOwnTurn(prepare.turn, new PedelecError("PROVIDER_FAILED", "no"));
    await expect(prepare.completion).rejects.toMatchObject({ code: "PREPARE_FAILED", details: { cause: { code: "PROVIDER_FAILED" } } });
    const busy = createOwnTurn("prepare", "p2");
    settleOwnTurn(busy.turn, new PedelecError("SESSION_BUSY", "busy"));
    await expect(busy.completion).rejects.toMatchObject({ code: "SESSION_BUSY" });
  });
});
