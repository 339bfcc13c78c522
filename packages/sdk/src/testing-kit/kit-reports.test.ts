import { afterEach, describe, expect, it } from "vitest";
import type { Artifact, PedelecEventContext, TokenUsage } from "../types.js";
import { errorOf } from "../testing/error-of.js";
import { createPedelecTestKit, type PedelecTestKit, type ScriptedTurn } from "./index.js";

const kits: PedelecTestKit[] = [];
afterEach(async () => {
  await Promise.all(kits.splice(0).map((kit) => kit.dispose()));
});

function newKit(): PedelecTestKit {
  const kit = createPedelecTestKit();
  kits.push(kit);
  return kit;
}

const usageEvents = (kit: PedelecTestKit, sessionId: string) =>
  kit.events(sessionId).flatMap(({ event }) => (event.type === "usage-updated" ? [event] : []));

describe("token usage a test scripts", () => {
  it("reaches the page as the desktop sends it: the turn's usage replaced, turns added up, a lower count ignored", async () => {
    const kit = newKit();
    const scripts: Array<(turn: ScriptedTurn) => void> = [
      (turn) => {
        turn.usage({ inputTokens: 1_000, cachedInputTokens: 900 });
        turn.delta("One");
        // Of one tick: joined, only the newest goes out.
        turn.usage({ inputTokens: 1_000, cachedInputTokens: 900, outputTokens: 3 });
        turn.usage({ inputTokens: 1_000, cachedInputTokens: 900, outputTokens: 8, totalTokens: 1_008 });
        turn.complete();
      },
      (turn) => {
        turn.usage({ inputTokens: 2_000, outputTokens: 20 });
        turn.activity("Thinking");
        turn.usage({ inputTokens: 1_500, outputTokens: 25 });
        turn.complete("Two");
      },
    ];
    kit.agent.onTurn((turn) => scripts.shift()?.(turn));
    const session = await kit.pedelec.createSession();
    const seen: Array<[TokenUsage, PedelecEventContext]> = [];
    session.onUsage((usage, context) => seen.push([usage, context]));

    await session.sendText("one");
    expect(session.usage).toEqual({ inputTokens: 1_000, cachedInputTokens: 900, outputTokens: 8, totalTokens: 1_008 });
    await session.sendText("two");

    const total = { inputTokens: 3_000, cachedInputTokens: 900, outputTokens: 33, totalTokens: 1_008 };
    expect(usageEvents(kit, session.sessionId).map((event) => [event.usage, event.sessionUsage])).toEqual([
      [
        { inputTokens: 1_000, cachedInputTokens: 900 },
        { inputTokens: 1_000, cachedInputTokens: 900 },
      ],
      [
        { inputTokens: 1_000, cachedInputTokens: 900, outputTokens: 8, totalTokens: 1_008 },
        { inputTokens: 1_000, cachedInputTokens: 900, outputTokens: 8, totalTokens: 1_008 },
      ],
      [
        { inputTokens: 2_000, outputTokens: 20 },
        { inputTokens: 3_000, cachedInputTokens: 900, outputTokens: 28, totalTokens: 1_008 },
      ],
      [{ inputTokens: 2_000, outputTokens: 25 }, total],
    ]);
    expect(session.usage).toEqual(total);
    expect(kit.session(session.sessionId)?.usage).toEqual(total);
    expect(seen.map(([usage]) => usage.outputTokens)).toEqual([undefined, 8, 28, 33]);
    expect(seen.at(-1)?.[1]).toMatchObject({ source: "core", turnUsage: { inputTokens: 2_000, outputTokens: 25 } });
    const usageSeqs = kit.events(session.sessionId).flatMap(({ seq, event }) => (event.type === "usage-updated" ? [seq] : []));
    expect(seen.map(([, context]) => context.seq)).toEqual(usageSeqs);
    // A page that reloads sees the total at once.
    const reloaded = await kit.createClient().resumeSession(session.sessionId);
    expect(reloaded.usage).toEqual(total);
  });

  it("keeps what was sent when the desktop is killed, and everything when it stops cleanly", async () => {
    const kit = newKit();
    const session = await kit.pedelec.createSession();
    const killed = session.sendText("one");
    const turn = await kit.agent.nextTurn();
    turn.usage({ outputTokens: 10 });
    // Still waiting to be joined when the desktop dies: lost with it, as with a killed Core.
    turn.usage({ outputTokens: 50 });
    kit.loseCore();
    expect((await errorOf(killed)).code).toBe("CORE_RUNTIME_UNAVAILABLE");
    kit.restoreCore();
    expect(kit.session(session.sessionId)?.usage).toEqual({ outputTokens: 10 });

    const stopped = session.sendText("two");
    const next = await kit.agent.nextTurn();
    next.usage({ outputTokens: 5 });
    next.usage({ outputTokens: 7 });
    kit.loseCore({ how: "stopped" });
    expect((await errorOf(stopped)).code).toBe("SESSION_ERROR");
    kit.restoreCore();
    expect(kit.session(session.sessionId)?.usage).toEqual({ outputTokens: 17 });
    expect((await kit.createClient().resumeSession(session.sessionId)).usage).toEqual({ outputTokens: 17 });
  });

  it("refuses a report the desktop could not send, where the script made it", async () => {
    const kit = newKit();
    const problems: string[] = [];
    kit.agent.onTurn((turn) => {
      for (const usage of [{ inputTokens: -1 }, { outputTokens: 1.5 }, { inputToken: 3 }, { totalTokens: Number.MAX_SAFE_INTEGER + 1 }]) {
        try {
          turn.usage(usage as TokenUsage);
        } catch (error) {
          problems.push(error instanceof TypeError ? "TypeError" : String(error));
        }
      }
      turn.complete();
    });
    const session = await kit.pedelec.createSession();
    await session.sendText("go");
    expect(problems).toEqual(["TypeError", "TypeError", "TypeError", "TypeError"]);
    expect(usageEvents(kit, session.sessionId)).toEqual([]);
    expect(session.usage).toEqual({});
  });
});

describe("artifacts a test scripts", () => {
  it("reach onArtifact as the turn ends, before its status change, once per path, with the kind the desktop derives", async () => {
    const kit = newKit();
    kit.agent.onTurn((turn) => {
      turn.artifact({ path: "/charts/sales.png", sizeBytes: 2_048, mediaType: "image/png" });
      turn.artifact({ path: "/notes.md", mediaType: "text/markdown" });
      turn.artifact({ path: "/charts/sales.png", sizeBytes: 4_096, mediaType: "image/png" });
      turn.complete("Drew it.");
    });
    const session = await kit.pedelec.createSession();
    const seen: Artifact[] = [];
    session.onArtifact((artifact) => seen.push(artifact));
    await session.sendText("Draw the chart");
    expect(seen.map(({ modifiedAt: _modifiedAt, ...rest }) => rest)).toEqual([
      { path: "/notes.md", kind: "text", sizeBytes: 0, mediaType: "text/markdown" },
      { path: "/charts/sales.png", kind: "image", sizeBytes: 4_096, mediaType: "image/png" },
    ]);
    const types = kit.events(session.sessionId).map(({ event }) => event.type);
    expect(types.lastIndexOf("artifact-created")).toBeLessThan(types.lastIndexOf("status-changed"));
  });

  it("refuses a path the asset rule refuses", async () => {
    const kit = newKit();
    const thrown: unknown[] = [];
    kit.agent.onTurn((turn) => {
      for (const path of ["relative.txt", "/../escape", "/.pedelec-upload"]) {
        try {
          turn.artifact({ path });
        } catch (error) {
          thrown.push(error);
        }
      }
      turn.complete();
    });
    const session = await kit.pedelec.createSession();
    await session.sendText("go");
    expect(thrown).toHaveLength(3);
    expect(thrown.every((error) => error instanceof TypeError)).toBe(true);
  });
});
