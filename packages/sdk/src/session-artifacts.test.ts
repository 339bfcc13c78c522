import { describe, expect, it, vi } from "vitest";
import type { SessionEvent } from "@pedelec/protocol/session-events";
import { Pedelec } from "./pedelec.js";
import { FakeExtension } from "./testing/fake-extension.js";
import type { PedelecEventContext } from "./types.js";

const SESSION_ID = "session-0001";
const marker = (text: string): SessionEvent => ({ type: "chat-delta", turnId: "turn-9", messageId: "m9", delta: text });

describe("session.onArtifact", () => {
  it("passes each artifact Core reports with its turn, and stops after unsubscribe", async () => {
    const extension = new FakeExtension().install();
    const session = await new Pedelec().createSession({ provider: "claude" });
    const seen: Array<[unknown, PedelecEventContext]> = [];
    const stop = session.onArtifact((artifact, context) => seen.push([artifact, context]));
    const artifact = { path: "/chart.png", kind: "image", sizeBytes: 10, mediaType: "image/png", modifiedAt: "2025-01-01T00:00:00.000Z" } as const;
    extension.emit(SESSION_ID, { type: "turn-started", turnId: "turn-1", turnKind: "user" });
    extension.emit(SESSION_ID, { type: "artifact-created", turnId: "turn-1", artifact });
    await vi.waitFor(() => expect(seen).toHaveLength(1));
    expect(seen[0]).toEqual([artifact, expect.objectContaining({ sessionId: SESSION_ID, turnId: "turn-1", seq: 2, source: "core" })]);
    stop();
    const deltas: string[] = [];
    session.onChatDelta((delta) => deltas.push(delta));
    extension.emit(SESSION_ID, { type: "artifact-created", turnId: "turn-1", artifact: { ...artifact, path: "/other.png" } });
    // Events arrive in order: once the marker after it is in, the unsubscribed listener would have had it.
    extension.emit(SESSION_ID, marker("after"));
    await vi.waitFor(() => expect(deltas).toEqual(["after"]));
    expect(seen).toHaveLength(1);
  });
});
