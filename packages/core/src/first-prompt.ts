import type { RegisteredTool } from "./tool-registry.js";

export interface FirstPromptInput {
  threadId: string;
  guidance: string;
  tools: readonly Pick<RegisteredTool, "name" | "description">[];
  userText: string;
}

/** Marks where the user's own words start; providers see everything before it only on the first turn. */
export const USER_MESSAGE_MARKER = "[User Message]";

/**
 * The first turn's prompt: runtime rules, the app's guidance, the tool index (names and descriptions only — the agent
 * reads a schema with tool-spec when it needs one), how to call pedelec-cli, then the user's message.
 */
export function buildFirstPrompt(input: FirstPromptInput): string {
  // Thread ids are path-safe by schema, so they need no shell quoting.
  const thread = input.threadId;
  const toolIndex =
    input.tools.length === 0
      ? "(this app offers no tools)"
      : input.tools.map((tool) => `- ${tool.name}: ${tool.description.replaceAll("\n", " ")}`).join("\n");
  return [
    "[Pedelec Runtime Rules]",
    "You are working for a web application through Pedelec. The application runs in the user's browser and offers",
    "app tools that act on what the user sees. App tools are not native tools of yours: call them only with the",
    "shell command `pedelec-cli`, which is on your PATH.",
    `- Read a tool's argument schema: pedelec-cli --thread-id ${thread} tool-spec <tool-name>`,
    `- Call a tool: pedelec-cli --thread-id ${thread} tool-call <tool-name> '<json_args>'`,
    "  The arguments are one JSON object in single quotes. The command waits for the application and prints the",
    '  tool\'s result as JSON on stdout (exit 0). On failure it prints {"error":{"code":…,"message":…}} and exits',
    "  non-zero; read the code, fix the arguments if they were invalid, and do not invent results.",
    "- Read a tool's schema before its first call unless the description already makes the arguments obvious.",
    "- Work in the current directory (the session workspace); `.pedelec-runtime/` inside it belongs to Pedelec.",
    "- Files the user uploads from the page are in `.pedelec-runtime/assets/` (for example an upload named /photos/a.png",
    "  is `.pedelec-runtime/assets/photos/a.png`). Files you write there (not symlinks) are visible to the page, which",
    "  can list and read them. Names starting with `.pedelec-` there are Pedelec's own; leave them alone.",
    "- To run JavaScript or TypeScript, use only Pedelec's sandboxed runtime, also on your PATH:",
    `  pedelec-ts-runtime --thread-id ${thread} run <workspace-relative-path> [-- args…]`,
    `  pedelec-ts-runtime --thread-id ${thread} run - [-- args…]   (script source on stdin)`,
    "  Scripts may read and write only the workspace; no network, environment, subprocesses, FFI, npm/jsr or remote",
    '  imports. `import { workspaceRoot, assetsDir, threadId } from "pedelec:workspace"` gives the workspace paths.',
    "  Its exit code is the script's own; 124 means it timed out, 125 that Pedelec refused or stopped it (the last",
    '  stderr line is {"error":{"code":…,"message":…}}). If it fails, report the failure; never fall back to',
    "  node, bun, deno or another runtime.",
    "[/Pedelec Runtime Rules]",
    "",
    "[Pedelec App Guidance]",
    input.guidance.trim() === "" ? "(none)" : input.guidance.trim(),
    "[/Pedelec App Guidance]",
    "",
    "[Pedelec App Tools]",
    toolIndex,
    "[/Pedelec App Tools]",
    "",
    "------",
    USER_MESSAGE_MARKER,
    input.userText,
  ].join("\n");
}
