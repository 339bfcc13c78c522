import type { WireFormat } from "../model-servers/wire-format.js";
import type { RecordedReply } from "./recording-scenarios.js";

/** One scripted reply in words, for a recorded file's README. */
export function describeReply(reply: RecordedReply, format: WireFormat): string {
  switch (reply.kind) {
    case "text":
      return `text in ${reply.deltas.length} deltas: ${reply.deltas.map((delta) => `\`${JSON.stringify(delta)}\``).join(" · ")}`;
    case "shell": {
      const call = format.shellCall(reply.command);
      return `a call of the shell tool \`${call.name}\` with input \`${JSON.stringify(call.input)}\``;
    }
    case "tool":
      return `a call of the tool \`${reply.name}\` with input \`${JSON.stringify(reply.input)}\``;
    case "error":
      return `HTTP ${reply.status} with the body \`${JSON.stringify(format.errorBody(reply.status, reply.message ?? "scripted error"))}\``;
    case "hang":
      return "nothing: the request was accepted and never answered";
    case "stall-mid-stream":
      return `the opening events with ${reply.deltas.length} deltas, then nothing more`;
    case "drop-mid-stream":
      return `the opening events with ${reply.deltas.length} deltas, then the connection was destroyed`;
    case "text-quoting-tool-result":
      return `text in 2 deltas: \`${JSON.stringify(reply.prefix)}\`, then the tool results the request carried back (as the server received them)`;
  }
}
