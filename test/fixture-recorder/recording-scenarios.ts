import type { AccessMode } from "@pedelec/protocol/domain";
import type { ModelReply, ModelRequest, ScriptedReply } from "../model-servers/model-server-types.js";

/** A reply of the scripted model, or text that quotes the tool results the request carried back. */
export type RecordedReply = ModelReply | { kind: "text-quoting-tool-result"; prefix: string };

/** What the recorder knows about a scenario it already ran, for scenarios that depend on it. */
export interface RecordedScenarioResult {
  /** The turn requests its model server received during that run (title requests left out). */
  requests: readonly ModelRequest[];
}

/** One recorded run: what the model answers, how the CLI is started, and what is checked around it. */
export interface RecordingScenario {
  /** The file name without `.jsonl`. */
  name: string;
  /** What the run shows, one sentence for the README. */
  purpose: string;
  prompt: string;
  access: AccessMode;
  /** The scripted replies, one per turn request, in order. */
  replies: readonly RecordedReply[];
  /** Answer every turn request with this instead (`replies` is then empty). */
  everyRequest?: ModelReply;
  /** Runs in the HOME, workspace and model server of that earlier scenario, resuming the session it printed. */
  resumes?: string;
  /** Variables only this run gets, each with the reason. */
  env?: readonly ScenarioVariable[];
  /** A path outside the workspace the run tries to create: removed before, looked for and removed after. */
  outsidePath?: string;
  /** Recorded only when this holds for the scenarios recorded before it; `skippedBecause` goes in the README otherwise. */
  when?: { holds(earlier: ReadonlyMap<string, RecordedScenarioResult>): boolean; skippedBecause: string };
}

/** The deltas of `plain-answer`'s text. */
export const PLAIN_ANSWER_DELTAS = ["Hello", " from the", " scripted", " model."];
/** The shell command of the `shell-command` scenario, and the text the model ends that turn with. */
export const SHELL_COMMAND = "echo hello-from-shell";
export const SHELL_FINAL_DELTAS = ["Final answer: the shell", " command printed", " hello-from-shell."];
/** The answer of `resumed-turn`. */
export const RESUMED_DELTAS = ["I said", " hello", " before."];
/** The answer `overloaded-then-answer`'s retry gets. */
export const RETRY_ANSWER_DELTAS = ["Answer after", " the retry."];

/** The file the `sandbox-write-outside` scenario's command tries to create, outside every workspace. */
export const OUTSIDE_PATH = "/var/tmp/pedelec-fixture-outside";
export const TOOL_RESULT_PREFIX = "Tool result: ";

/** Turns a recorded reply into what the model server's script takes. */
export function scriptedReply(reply: RecordedReply): ScriptedReply {
  if (reply.kind !== "text-quoting-tool-result") return reply;
  return (request) => ({ kind: "text", deltas: [reply.prefix, request.toolResults.join("\n") || "(no tool result came back)"] });
}

/** A variable one scenario's run gets on top of the usual environment, and why. */
export interface ScenarioVariable {
  name: string;
  value: string;
  note: string;
}

/** What differs between the CLIs in the scenarios they share. */
export interface CommonScenarioOptions {
  /** The status the CLI's API answers when it is overloaded (Anthropic's 529, OpenAI's 503). */
  overloadStatus: 529 | 503 | 429;
  /** Variables the Full Access run needs besides the adapter's (claude as root: IS_SANDBOX=1). */
  fullAccessEnv?: readonly ScenarioVariable[];
  /** Variables the `auth-refused` run needs to end in time (claude: fewer retries). */
  authRefusedEnv?: readonly ScenarioVariable[];
}

const shellPrompt = `Run \`${SHELL_COMMAND}\` in the shell and tell me what it printed.`;

/** Whether the `shell-command` run's command ran: its output came back to the model. */
function sandboxRanShellCommand(earlier: ReadonlyMap<string, RecordedScenarioResult>): boolean {
  const results = earlier.get("shell-command")?.requests.flatMap((request) => request.toolResults) ?? [];
  return results.some((result) => result.includes("hello-from-shell"));
}

/** The scenarios every CLI is recorded in, in order (`resumed-turn` needs `plain-answer` before it). */
export function commonScenarios(options: CommonScenarioOptions): RecordingScenario[] {
  return [
    {
      name: "plain-answer",
      purpose: "A first turn answered with text in several deltas.",
      prompt: "Say hello in one short sentence.",
      access: "sandbox",
      replies: [{ kind: "text", deltas: PLAIN_ANSWER_DELTAS }],
    },
    {
      name: "shell-command",
      purpose: `The model runs \`${SHELL_COMMAND}\` with the CLI's own shell tool, then answers with text.`,
      prompt: shellPrompt,
      access: "sandbox",
      replies: [
        { kind: "shell", command: SHELL_COMMAND },
        { kind: "text", deltas: SHELL_FINAL_DELTAS },
      ],
    },
    {
      name: "shell-command-full-access",
      purpose: `\`shell-command\` again with the Full Access argv, since the sandbox session refused \`${SHELL_COMMAND}\`.`,
      prompt: shellPrompt,
      access: "full",
      replies: [
        { kind: "shell", command: SHELL_COMMAND },
        { kind: "text", deltas: SHELL_FINAL_DELTAS },
      ],
      ...(options.fullAccessEnv === undefined ? {} : { env: options.fullAccessEnv }),
      when: {
        holds: (earlier) => !sandboxRanShellCommand(earlier),
        skippedBecause: `\`shell-command-full-access.jsonl\` is not recorded: the sandbox session ran \`${SHELL_COMMAND}\` (its output came back to the model), so the Full Access run is not needed.`,
      },
    },
    {
      name: "resumed-turn",
      purpose: "A second turn resuming the session of `plain-answer.jsonl` (same HOME, workspace and model server).",
      prompt: "What did you just say?",
      access: "sandbox",
      replies: [{ kind: "text", deltas: RESUMED_DELTAS }],
      resumes: "plain-answer",
    },
    {
      name: "auth-refused",
      purpose: "The model API refuses the key: HTTP 401 to every request.",
      prompt: "Say hello.",
      access: "sandbox",
      replies: [],
      everyRequest: { kind: "error", status: 401, message: "invalid API key (scripted)" },
      ...(options.authRefusedEnv === undefined ? {} : { env: options.authRefusedEnv }),
    },
    {
      name: "overloaded-then-answer",
      purpose: `The first request gets HTTP ${options.overloadStatus}; the CLI retries and the retry is answered with text.`,
      prompt: "Say hello.",
      access: "sandbox",
      replies: [
        { kind: "error", status: options.overloadStatus, message: "overloaded (scripted)" },
        { kind: "text", deltas: RETRY_ANSWER_DELTAS },
      ],
    },
    {
      name: "sandbox-write-outside",
      purpose: `In a sandbox session the model runs \`touch ${OUTSIDE_PATH}\` (outside the workspace), then reports the tool result.`,
      prompt: `Run \`touch ${OUTSIDE_PATH}\` and report what happened.`,
      access: "sandbox",
      replies: [
        { kind: "shell", command: `touch ${OUTSIDE_PATH}` },
        { kind: "text-quoting-tool-result", prefix: TOOL_RESULT_PREFIX },
      ],
      outsidePath: OUTSIDE_PATH,
    },
  ];
}
