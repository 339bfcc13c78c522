import type { RequestFields } from "./wire-format.js";

interface InputItem {
  type?: string;
  role?: string;
  content?: string | { type?: string; text?: string }[];
  output?: unknown;
}
interface ResponsesBody {
  model?: string;
  input?: string | InputItem[];
  tools?: { type?: string; name?: string }[];
  reasoning?: { effort?: string } | null;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as { text?: unknown }[]).flatMap((part) => (typeof part.text === "string" ? [part.text] : [])).join("\n");
}

const isMessage = (item: InputItem) => item.type === "message" || (item.type === undefined && typeof item.role === "string");
const isToolOutput = (item: InputItem) => item.type === "function_call_output" || item.type === "custom_tool_call_output";

/** Reads a Responses request; the tool results of this request are the call outputs after its last message item. */
export function readOpenAiResponsesRequest(body: unknown): RequestFields {
  const request = (body ?? {}) as ResponsesBody;
  const input: InputItem[] = typeof request.input === "string" ? [{ type: "message", role: "user", content: request.input }] : (request.input ?? []);
  const messages = input.filter(isMessage);
  const lastMessage = input.findLastIndex(isMessage);
  const lastUser = messages.filter((item) => item.role === "user").at(-1);
  return {
    model: request.model ?? null,
    effort: request.reasoning?.effort ?? null,
    userText: lastUser === undefined ? "" : textOf(lastUser.content),
    toolResults: input
      .slice(lastMessage + 1)
      .filter(isToolOutput)
      .map((item) => textOf(item.output)),
    toolNames: (request.tools ?? []).flatMap((tool) =>
      typeof tool.name === "string" ? [tool.name] : typeof tool.type === "string" ? [tool.type] : [],
    ),
    transcript: messages
      .filter((item) => item.role === "user" || item.role === "assistant")
      .map((item) => ({ role: item.role ?? "", text: textOf(item.content) }))
      .filter((entry) => entry.text !== ""),
  };
}
