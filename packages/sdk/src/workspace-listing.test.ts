import { afterEach, describe, expect, it, vi } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { Pedelec } from "./pedelec.js";
import { errorOf } from "./testing/error-of.js";
import { FakeExtension } from "./testing/fake-extension.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

async function openSession() {
  const extension = new FakeExtension().install();
  const session = await new Pedelec().createSession({ provider: "claude" });
  return { extension, session };
}

describe("session.workspace.listFiles and listFolders", () => {
  it("ask Core for the workspace's files or folders, under a folder when given, and resolve with the paths", async () => {
    const { extension, session } = await openSession();
    extension.handle("listWorkspaceEntries", (request) => {
      const { kind, path } = request.payload as { kind: string; path?: string };
      return { paths: kind === "files" ? [`${path ?? "."}/a.ts`] : ["src"] };
    });
    await expect(session.workspace.listFiles()).resolves.toEqual(["./a.ts"]);
    await expect(session.workspace.listFiles("src")).resolves.toEqual(["src/a.ts"]);
    await expect(session.workspace.listFolders()).resolves.toEqual(["src"]);
    expect(extension.requestsOf("listWorkspaceEntries").map((request) => request.payload)).toEqual([
      { sessionId: session.sessionId, kind: "files" },
      { sessionId: session.sessionId, kind: "files", path: "src" },
      { sessionId: session.sessionId, kind: "folders" },
    ]);
  });

  it("refuse a path out of the workspace with INVALID_INPUT before anything is sent", async () => {
    const { extension, session } = await openSession();
    for (const path of ["../etc", "/etc", "a\\b", "", "src/./x", ".git"]) {
      expect((await errorOf(session.workspace.listFolders(path))).code).toBe("INVALID_INPUT");
    }
    expect(extension.requestsOf("listWorkspaceEntries")).toEqual([]);
  });

  it("pass on Core's refusal and reject an answer that is not a list of paths with SDK_PROTOCOL_ERROR", async () => {
    const { extension, session } = await openSession();
    extension.handle("listWorkspaceEntries", () => {
      throw new PedelecError("WORKSPACE_LIST_TOO_LARGE", "too many", { limitEntries: 50_000, limitBytes: 4_194_304, path: null });
    });
    expect(await errorOf(session.workspace.listFiles())).toMatchObject({ code: "WORKSPACE_LIST_TOO_LARGE", details: { path: null } });
    extension.handle("listWorkspaceEntries", () => ({ paths: [1, 2] }));
    expect((await errorOf(session.workspace.listFiles())).code).toBe("SDK_PROTOCOL_ERROR");
  });

  it("reject with SESSION_ENDED once the session has ended", async () => {
    const { extension, session } = await openSession();
    extension.handle("endSession", () => ({ ended: true }));
    await session.end();
    expect((await errorOf(session.workspace.listFiles())).code).toBe("SESSION_ENDED");
    expect(extension.requestsOf("listWorkspaceEntries")).toEqual([]);
  });
});
