import { afterEach, describe, expect, it } from "vitest";
import type { Artifact } from "../types.js";
import { createPedelecTestKit, type PedelecTestKit } from "./index.js";

const kits: PedelecTestKit[] = [];
afterEach(async () => {
  await Promise.all(kits.splice(0).map((kit) => kit.dispose()));
});

function newKit(): PedelecTestKit {
  const kit = createPedelecTestKit();
  kits.push(kit);
  return kit;
}

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
