import type { RequestFields } from "./wire-format.js";

interface ContentBlock {
  type?: string;
  text?: string;
  content?: unknown;
}
interface Message {
  role?: string;
  content?: string | ContentBlock[];
}
interface MessagesBody {
  model?: string;
  messages?: Message[];
  tools?: { name?: string }[];
  output_config?: { effort?: string };
}

function blocksOf(message: Message): ContentBlock[] {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : (message.content ?? []);
}

/** Claude Code adds its own context to user messages as text blocks wrapped in `<system-reminder>` tags. */
function isSystemReminder(text: string): boolean {
  const trimmed = text.trim();
  return trimmed.startsWith("<system-reminder>") && trimmed.endsWith("</system-reminder>");
}

/** The message's own text: its text blocks, without claude's system reminders. */
function textOf(message: Message): string {
  return blocksOf(message)
    .flatMap((block) => (block.type === "text" && typeof block.text === "string" && !isSystemReminder(block.text) ? [block.text] : []))
    .join("\n");
}

/** A tool result's content as text: a string, or the text of its blocks. */
function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as ContentBlock[]).map((block) => block.text ?? "").join("\n");
}

const isConversation = (message: Message) => message.role === "user" || message.role === "assistant";

/**
 * Reads an Anthropic Messages request. Claude's `messages` mix `role:"system"` entries into the conversation, and its
 * user messages carry `<system-reminder>` blocks before the user's words; neither counts as user or transcript text.
 */
export function readAnthropicMessagesRequest(body: unknown): RequestFields {
  const request = (body ?? {}) as MessagesBody;
  const messages = request.messages ?? [];
  const conversation = messages.filter(isConversation);
  // The last user message with text of its own: tool results (and claude's reminders beside them) do not count.
  const lastUser = conversation.filter((message) => message.role === "user" && textOf(message) !== "").at(-1);
  const last = conversation.at(-1);
  const toolResults =
    last?.role === "user"
      ? blocksOf(last)
          .filter((block) => block.type === "tool_result")
          .map((block) => toolResultText(block.content))
      : [];
  return {
    model: request.model ?? null,
    effort: request.output_config?.effort ?? null,
    userText: lastUser === undefined ? "" : textOf(lastUser),
    toolResults,
    toolNames: (request.tools ?? []).flatMap((tool) => (typeof tool.name === "string" ? [tool.name] : [])),
    transcript: conversation.map((message) => ({ role: message.role ?? "", text: textOf(message) })).filter((entry) => entry.text !== ""),
  };
}
