import { SESSION_SCRIPT_TOOL } from "@pedelec/protocol/session-tool-server";
import type { RegisteredTool } from "./tool-registry.js";

export interface FirstPromptInput {
  threadId: string;
  guidance: string;
  tools: readonly Pick<RegisteredTool, "name" | "description">[];
  userText: string;
  /**
   * The agent's own name for a tool of the session's MCP server, when its CLI loads that server: the rules then name
   * the page's tools and `run_script` as tools, and mention the shell commands only as a fallback.
   */
  nativeToolName?: (toolName: string) => string;
}

/** Marks where the user's own words start; providers see everything before it only on the first turn. */
export const USER_MESSAGE_MARKER = "[User Message]";

/** What every agent is told about the workspace and the page's files, whatever way it calls tools. */
const WORKSPACE_RULES = [
  "- Work in the current directory (the session workspace); `.pedelec-runtime/` inside it belongs to Pedelec.",
  "- Files the user uploads from the page are in `.pedelec-runtime/assets/` (for example an upload named /photos/a.png",
  "  is `.pedelec-runtime/assets/photos/a.png`). Files you write there (not symlinks) are visible to the page, which",
  "  can list and read them. Names starting with `.pedelec-` there are Pedelec's own; leave them alone.",
];

const SCRIPT_LIMITS = [
  "  Scripts may read and write only the workspace; no network, environment, subprocesses, FFI, npm/jsr or remote",
  '  imports. `import { workspaceRoot, assetsDir, threadId } from "pedelec:workspace"` gives the workspace paths.',
];

/**
 * The first turn's prompt: runtime rules, the app's guidance, the tool index (names and descriptions only: an agent
 * with native tools has their schemas, one without reads a schema with tool-spec when it needs one), then the user's
 * message.
 */
export function buildFirstPrompt(input: FirstPromptInput): string {
  const { nativeToolName } = input;
  const toolIndex =
    input.tools.length === 0
      ? "(this app offers no tools)"
      : input.tools.map((tool) => `- ${tool.name}: ${tool.description.replaceAll("\n", " ")}`).join("\n");
  return [
    "[Pedelec Runtime Rules]",
    ...(nativeToolName ? nativeToolRules(input.threadId, nativeToolName, input.tools) : shellRules(input.threadId)),
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

function nativeToolRules(thread: string, nativeToolName: (toolName: string) => string, tools: readonly Pick<RegisteredTool, "name">[]): string[] {
  // A page tool named run_script keeps its name; scripts then go through the shell command only.
  const runScript = tools.some((tool) => tool.name === SESSION_SCRIPT_TOOL) ? null : nativeToolName(SESSION_SCRIPT_TOOL);
  return [
    "You are working for a web application through Pedelec. The application runs in the user's browser and offers",
    `app tools that act on what the user sees. They are among your own tools, with their argument schemas: the tool`,
    `${nativeToolName("<name>")} for each app tool <name> listed under [Pedelec App Tools]. A call waits for the`,
    'application and returns the tool\'s result as JSON; a failed call returns {"error":{"code":…,"message":…,"remedy":…}}:',
    "read the code, fix the arguments if they were invalid, and do not invent results.",
    ...WORKSPACE_RULES,
    ...(runScript === null
      ? [`- To run JavaScript or TypeScript, use only: pedelec-ts-runtime --thread-id ${thread} run - (script source on stdin)`]
      : [
          `- To run JavaScript or TypeScript, use only your tool ${runScript} (Pedelec's sandboxed runtime): give the`,
          "  script as `source`, or a workspace file as `entry`; it returns the exit code and the output.",
        ]),
    ...SCRIPT_LIMITS,
    "  If a script fails, report the failure; never fall back to node, bun, deno or another runtime.",
    `- Only if those tools are missing: pedelec-cli --thread-id ${thread} tool-call <tool-name> '<json_args>' does the same.`,
  ];
}

function shellRules(thread: string): string[] {
  // Thread ids are path-safe by schema, so they need no shell quoting.
  return [
    "You are working for a web application through Pedelec. The application runs in the user's browser and offers",
    "app tools that act on what the user sees. App tools are not native tools of yours: call them only with the",
    "shell command `pedelec-cli`, which is on your PATH.",
    `- Read a tool's argument schema: pedelec-cli --thread-id ${thread} tool-spec <tool-name>`,
    `- Call a tool: pedelec-cli --thread-id ${thread} tool-call <tool-name> '<json_args>'`,
    "  The arguments are one JSON object in single quotes. The command waits for the application and prints the",
    '  tool\'s result as JSON on stdout (exit 0). On failure it prints {"error":{"code":…,"message":…}} and exits',
    "  non-zero; read the code, fix the arguments if they were invalid, and do not invent results.",
    "- Read a tool's schema before its first call unless the description already makes the arguments obvious.",
    ...WORKSPACE_RULES,
    "- To run JavaScript or TypeScript, use only Pedelec's sandboxed runtime, also on your PATH:",
    `  pedelec-ts-runtime --thread-id ${thread} run <workspace-relative-path> [-- args…]`,
    `  pedelec-ts-runtime --thread-id ${thread} run - [-- args…]   (script source on stdin)`,
    ...SCRIPT_LIMITS,
    "  Its exit code is the script's own; 124 means it timed out, 125 that Pedelec refused or stopped it (the last",
    '  stderr line is {"error":{"code":…,"message":…}}). If it fails, report the failure; never fall back to',
    "  node, bun, deno or another runtime.",
  ];
}
