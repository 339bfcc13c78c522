import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentConversationsFolder, removeAgentConversation, sweepAgentConversations } from "./ollama-conversations.js";

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "pedelec-ollama-conversations-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function plant(name: string, modifiedAt: number): Promise<void> {
  const folder = agentConversationsFolder(home);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, name), "{}");
  await utimes(join(folder, name), modifiedAt / 1000, modifiedAt / 1000);
}

const listed = async (): Promise<string[]> => (await readdir(agentConversationsFolder(home))).sort();

describe("pedelec-agent's stored conversations, as Core removes them", () => {
  it("removes one conversation by id, and nothing for an id that is not one", async () => {
    await plant("conversation-0001.json", Date.now());
    await plant("keep-me-0002.json", Date.now());
    await removeAgentConversation(home, "conversation-0001");
    await removeAgentConversation(home, "../keep-me-0002");
    await removeAgentConversation(home, "missing-0003");
    expect(await listed()).toEqual(["keep-me-0002.json"]);
  });

  it("sweeps what is neither kept nor recent, cut-off temporary saves included, and leaves other files alone", async () => {
    const now = Date.now();
    await plant("owned-00000001.json", now - 10 * 60 * 60_000);
    await plant("orphan-0000002.json", now - 10 * 60 * 60_000);
    await plant("orphan-0000002.json.4242.0f8e2b9c-1111-4222-8333-944455556666.tmp", now - 10 * 60 * 60_000);
    await plant("fresh-00000003.json", now);
    await plant("notes.txt", now - 10 * 60 * 60_000);
    expect(await sweepAgentConversations(home, new Set(["owned-00000001"]), now - 60 * 60_000)).toBe(2);
    expect(await listed()).toEqual(["fresh-00000003.json", "notes.txt", "owned-00000001.json"]);
  });

  it("sweeps nothing when the agent never stored a conversation", async () => {
    expect(await sweepAgentConversations(home, new Set(), Date.now())).toBe(0);
  });
});
