import type { RequestFields } from "./wire-format.js";

interface ChatMessage {
  role?: string;
  content?: string | { type?: string; text?: string }[] | null;
}
interface ChatBody {
  model?: string;
  messages?: ChatMessage[];
  tools?: { function?: { name?: string } }[];
  reasoning_effort?: string;
}

function textOf(message: ChatMessage): string {
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("\n");
}

/** Reads a Chat Completions request; the tool results of this request are the `role:"tool"` messages at its end. */
export function readChatCompletionsRequest(body: unknown): RequestFields {
  const request = (body ?? {}) as ChatBody;
  const messages = request.messages ?? [];
  let firstTrailingTool = messages.length;
  while (firstTrailingTool > 0 && messages[firstTrailingTool - 1]?.role === "tool") firstTrailingTool -= 1;
  const lastUser = messages.filter((message) => message.role === "user").at(-1);
  return {
    model: request.model ?? null,
    effort: request.reasoning_effort ?? null,
    userText: lastUser === undefined ? "" : textOf(lastUser),
    toolResults: messages.slice(firstTrailingTool).map(textOf),
    toolNames: (request.tools ?? []).flatMap((tool) => (typeof tool.function?.name === "string" ? [tool.function.name] : [])),
    transcript: messages
      .filter((message) => message.role === "user" || message.role === "assistant")
      .map((message) => ({ role: message.role ?? "", text: textOf(message) }))
      .filter((entry) => entry.text !== ""),
  };
}

/** OpenCode's title request: a system prompt that starts "You are a title generator", and no tools. */
export function isOpenCodeTitleRequest(body: unknown): boolean {
  const request = (body ?? {}) as ChatBody;
  if ((request.tools ?? []).length > 0) return false;
  return (request.messages ?? []).some((message) => message.role === "system" && textOf(message).trimStart().startsWith("You are a title generator"));
}
