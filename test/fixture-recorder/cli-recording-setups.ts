import type { AccessMode } from "@pedelec/protocol/domain";
import { createClaudeAdapter } from "@pedelec/core/providers/claude/claude-adapter";
import { buildClaudeArgs } from "@pedelec/core/providers/claude/claude-args";
import { createCodexAdapter } from "@pedelec/core/providers/codex/codex-adapter";
import { buildCodexArgs } from "@pedelec/core/providers/codex/codex-args";
import { createOpencodeAdapter } from "@pedelec/core/providers/opencode/opencode-adapter";
import { buildOpencodeArgs, opencodeSandboxEnv } from "@pedelec/core/providers/opencode/opencode-args";
import { ANTHROPIC_MESSAGES, startAnthropicMessagesServer } from "../model-servers/anthropic-messages-server.js";
import { CHAT_COMPLETIONS, startChatCompletionsServer } from "../model-servers/chat-completions-server.js";
import type { ModelServer } from "../model-servers/model-server-types.js";
import { OPENAI_RESPONSES, startOpenAiResponsesServer } from "../model-servers/openai-responses-server.js";
import type { WireFormat } from "../model-servers/wire-format.js";
import type { RealCli } from "../real-clis/real-clis.js";
import { commonScenarios, type RecordingScenario } from "./recording-scenarios.js";
import { TEST_TOOL_SERVER } from "@pedelec/core/testing/provider-turns";

/** What one turn's argv depends on, as the session hands it to the adapter. */
export interface RecordedTurn {
  access: AccessMode;
  providerSessionId: string | null;
  workspacePath: string;
}

/** Everything the recorder needs to know about one CLI. */
export interface CliRecordingSetup {
  cli: RealCli;
  label: string;
  startServer(): Promise<ModelServer>;
  format: WireFormat;
  /** The argv the adapter builds for this turn (at the default effort level, medium, and no model of the session's). */
  argv(turn: RecordedTurn): string[];
  /** The variables the adapter adds to the environment for this access mode. */
  adapterEnv(access: AccessMode): Record<string, string>;
  /** The field of the CLI's stdout lines that names the session to resume. */
  sessionIdField: string;
  scenarios: readonly RecordingScenario[];
}

/** The effort level a session gets when nobody chooses one (settings `defaultEffortLevel`). */
const DEFAULT_EFFORT = "medium";

/** As root, claude refuses its Full Access flag without IS_SANDBOX=1 (research/real-clis.md). */
const CLAUDE_FULL_ACCESS_ENV = [{ name: "IS_SANDBOX", value: "1", note: "claude refuses --dangerously-skip-permissions as root without it" }];
/** By default claude retries a refused key ten times over about three minutes. */
const CLAUDE_AUTH_REFUSED_ENV = [
  { name: "CLAUDE_CODE_MAX_RETRIES", value: "2", note: "this run only: by default claude retries a 401 ten times over about 3 minutes" },
];

export const CLI_RECORDING_SETUPS: readonly CliRecordingSetup[] = [
  {
    cli: "claude",
    label: "Claude Code",
    startServer: startAnthropicMessagesServer,
    format: ANTHROPIC_MESSAGES,
    // No Core runs while recording: the MCP server named is one that is not there, which claude reports and goes on.
    argv: (turn) =>
      buildClaudeArgs({
        ...turn,
        model: null,
        effortArgv: createClaudeAdapter().defaultEffortProfiles()[DEFAULT_EFFORT],
        toolServer: TEST_TOOL_SERVER,
      }),
    adapterEnv: () => ({}),
    sessionIdField: "session_id",
    scenarios: commonScenarios({ overloadStatus: 529, fullAccessEnv: CLAUDE_FULL_ACCESS_ENV, authRefusedEnv: CLAUDE_AUTH_REFUSED_ENV }),
  },
  {
    cli: "codex",
    label: "Codex",
    startServer: startOpenAiResponsesServer,
    format: OPENAI_RESPONSES,
    argv: (turn) =>
      buildCodexArgs({
        ...turn,
        model: null,
        effortArgv: createCodexAdapter().defaultEffortProfiles()[DEFAULT_EFFORT],
        toolServer: TEST_TOOL_SERVER,
        serversOff: [],
      }),
    adapterEnv: () => ({}),
    sessionIdField: "thread_id",
    scenarios: commonScenarios({ overloadStatus: 503 }),
  },
  {
    cli: "opencode",
    label: "OpenCode",
    startServer: startChatCompletionsServer,
    format: CHAT_COMPLETIONS,
    argv: (turn) => buildOpencodeArgs({ ...turn, model: null, effortArgv: createOpencodeAdapter().defaultEffortProfiles()[DEFAULT_EFFORT] }),
    adapterEnv: (access) => (access === "sandbox" ? opencodeSandboxEnv() : {}),
    sessionIdField: "sessionID",
    scenarios: commonScenarios({ overloadStatus: 503 }),
  },
];
