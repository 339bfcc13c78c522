import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";

/**
 * Where `pedelec-agent` keeps each conversation of the ollama provider: `PEDELEC_HOME/agent/conversations/<id>.json`
 * (the agent writes them; Core removes them with their session). One definition for both.
 */
export function agentConversationsFolder(pedelecHome: string): string {
  return join(pedelecHome, "agent", "conversations");
}

/** A conversation id the agent makes (agent-wire's conversation-started), which keeps it a plain file name. */
const CONVERSATION_ID = /^[A-Za-z0-9_-]{8,128}$/;

/** `<id>.json`, or the agent's temporary `<id>.json.<pid>.<uuid>.tmp` of a save that was cut off. */
const CONVERSATION_FILE = /^([A-Za-z0-9_-]{8,128})\.json(?:\.[0-9]+\.[0-9a-f-]+\.tmp)?$/;

/** Removes a conversation's file; a missing one is fine, an id that is not one is ignored. */
export async function removeAgentConversation(pedelecHome: string, conversationId: string): Promise<void> {
  if (!CONVERSATION_ID.test(conversationId)) return;
  await rm(join(agentConversationsFolder(pedelecHome), `${conversationId}.json`), { force: true });
}

/**
 * Removes every conversation file (and cut-off temporary file) that is not one of `keep` and was last written before
 * `modifiedBefore` (ms since the epoch), so a conversation a running turn has just started, whose id Core has not
 * stored yet, is spared. Returns how many it removed.
 */
export async function sweepAgentConversations(pedelecHome: string, keep: ReadonlySet<string>, modifiedBefore: number): Promise<number> {
  const folder = agentConversationsFolder(pedelecHome);
  const names = await readdir(folder).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    const id = CONVERSATION_FILE.exec(name)?.[1];
    if (id === undefined || keep.has(id)) continue;
    const file = join(folder, name);
    const info = await stat(file).catch(() => undefined);
    if (info === undefined || !info.isFile() || info.mtimeMs >= modifiedBefore) continue;
    await rm(file, { force: true });
    removed += 1;
  }
  return removed;
}
