import { randomUUID } from "node:crypto";
import { chmod, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { agentConversationsFolder } from "@pedelec/core/providers/ollama/ollama-conversations";
import { MAX_CONVERSATION_BYTES, trimConversation, type TrimReport } from "./conversation-trim.js";
import { ollamaMessageSchema } from "./ollama-chat-schema.js";

/** A stored conversation: what the model has seen so far, and where and with which model it happened. */
export const conversationRecordSchema = z.object({
  version: z.literal(1),
  conversationId: z.string(),
  model: z.string(),
  workspace: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  messages: z.array(ollamaMessageSchema),
});
export type ConversationRecord = z.infer<typeof conversationRecordSchema>;

/** The folder of the agent's conversations under PEDELEC_HOME (Core removes a session's with the session). */
export function conversationsFolder(pedelecHome: string): string {
  return agentConversationsFolder(pedelecHome);
}

/**
 * One file per conversation (`<id>.json`, 0600, in a 0700 folder), replaced atomically on every save: a turn killed
 * at any moment leaves the last complete round, never half a file. No file grows past MAX_CONVERSATION_BYTES.
 */
export class ConversationStore {
  readonly #folder: string;

  constructor(pedelecHome: string) {
    this.#folder = conversationsFolder(pedelecHome);
  }

  fileOf(conversationId: string): string {
    return join(this.#folder, `${conversationId}.json`);
  }

  /** The stored conversation; a missing or unreadable one fails with THREAD_NOT_FOUND. */
  async load(conversationId: string): Promise<ConversationRecord> {
    let text: string;
    try {
      text = await readFile(this.fileOf(conversationId), "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new PedelecError(
        "THREAD_NOT_FOUND",
        `the conversation ${conversationId} does not exist any more${code === "ENOENT" ? "" : ` (${code})`}`,
      );
    }
    let parsed: ReturnType<typeof conversationRecordSchema.safeParse> | undefined;
    try {
      parsed = conversationRecordSchema.safeParse(JSON.parse(text));
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || !parsed.success || parsed.data.conversationId !== conversationId) {
      throw new PedelecError("THREAD_NOT_FOUND", `the conversation ${conversationId} is stored in a file that cannot be read`);
    }
    return parsed.data;
  }

  /**
   * Saves the conversation, first trimming its messages in place to MAX_CONVERSATION_BYTES (see trimConversation), so
   * the model's next request holds what the file holds.
   */
  async save(record: ConversationRecord, maxBytes = MAX_CONVERSATION_BYTES): Promise<TrimReport> {
    const trimmed = trimConversation(record.messages, maxBytes);
    await mkdir(this.#folder, { recursive: true, mode: 0o700 });
    await chmod(this.#folder, 0o700);
    const file = this.fileOf(record.conversationId);
    const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`;
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(JSON.stringify({ ...record, updatedAt: new Date().toISOString() }));
      await handle.sync();
    } catch (error) {
      await handle.close();
      await rm(temporary, { force: true });
      throw error;
    }
    await handle.close();
    await rename(temporary, file);
    return trimmed;
  }
}

/** A new, empty conversation. */
export function newConversation(model: string, workspace: string, systemPrompt: string): ConversationRecord {
  const now = new Date().toISOString();
  return {
    version: 1,
    conversationId: randomUUID(),
    model,
    workspace,
    createdAt: now,
    updatedAt: now,
    messages: [{ role: "system", content: systemPrompt }],
  };
}
