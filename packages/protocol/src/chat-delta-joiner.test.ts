import { describe, expect, it } from "vitest";
import { ChatDeltaJoiner, type ChatDeltaPart } from "./chat-delta-joiner.js";

function joiner() {
  const sent: ChatDeltaPart[] = [];
  const pending: Array<() => void> = [];
  const deltas = new ChatDeltaJoiner({ send: (part) => sent.push({ ...part }), later: (callback) => pending.push(callback) });
  const tick = (): void => {
    for (let callback = pending.shift(); callback !== undefined; callback = pending.shift()) callback();
  };
  return { deltas, sent, tick };
}

describe("ChatDeltaJoiner", () => {
  it("sends the first delta at once and joins the rest of the same message until later fires", () => {
    const { deltas, sent, tick } = joiner();
    for (const delta of ["a", "b", "c"]) deltas.push({ turnId: "t", messageId: "m", delta });
    expect(sent).toEqual([{ turnId: "t", messageId: "m", delta: "a" }]);
    tick();
    expect(sent).toEqual([
      { turnId: "t", messageId: "m", delta: "a" },
      { turnId: "t", messageId: "m", delta: "bc" },
    ]);
  });

  it("never joins across messages, and flush() sends what waits before anything else goes out", () => {
    const { deltas, sent, tick } = joiner();
    deltas.push({ turnId: "t", messageId: "m1", delta: "a" });
    deltas.push({ turnId: "t", messageId: "m1", delta: "b" });
    deltas.push({ turnId: "t", messageId: "m2", delta: "c" });
    deltas.flush();
    expect(sent.map((part) => `${part.messageId}:${part.delta}`)).toEqual(["m1:a", "m1:b", "m2:c"]);
    tick();
    expect(sent).toHaveLength(3);
  });

  it("drops a waiting delta on discard()", () => {
    const { deltas, sent, tick } = joiner();
    deltas.push({ turnId: "t", messageId: "m", delta: "a" });
    deltas.push({ turnId: "t", messageId: "m", delta: "gone" });
    deltas.discard();
    tick();
    expect(sent.map((part) => part.delta)).toEqual(["a"]);
  });
});
