import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { ProviderAdapter, ProviderTurnOutcome } from "../provider-adapter.js";
import { defineCliAdapter } from "../cli-adapter.js";
import { exitFailure, unreadableLineFailure } from "../cli-runner.js";
import { probeSignIn, probeVersion } from "../provider-discovery.js";
import type { ProviderProcessResult } from "../provider-process.js";
import { buildCursorArgs, CURSOR_OWNED_FLAGS, isCursorEffortKnob } from "./cursor-args.js";
import { CURSOR_LOGIN_COMMAND, isCursorLoginRequiredText } from "./cursor-login-text.js";
import type { CursorStreamSummary } from "./cursor-stream-parser.js";

export interface CursorAdapterOptions {
  /** Time between SIGTERM and SIGKILL of the process group on cancel (default 2 s). */
  killGraceMs?: number;
}

/**
 * Cursor has no effort flag: its effort levels choose a model (a model the session names wins, see
 * `buildCursorArgs`). Users can change these in settings.
 */
export const CURSOR_DEFAULT_EFFORT_PROFILES = {
  low: ["--model", "auto"],
  medium: ["--model", "sonnet-4.5"],
  high: ["--model", "sonnet-4.5-thinking"],
};

/** The `cursor-agent` (Cursor CLI) provider: print mode, stream-json with partial output on stdout, prompt on stdin. */
export function createCursorAdapter(options: CursorAdapterOptions = {}): ProviderAdapter {
  return defineCliAdapter(
    {
      // `cursor-agent status` tells a signed-out install cheaply (research §5).
      discover: async (executablePath, signal, env) =>
        probeSignIn(await probeVersion(executablePath, signal, env), ["status"], isCursorSignedOut, CURSOR_LOGIN_COMMAND, signal, env),
      code: "cursor",
      programName: "cursor-agent",
      capabilities: { textDeltas: true, resume: true },
      defaultEffortProfiles: () => ({
        low: [...CURSOR_DEFAULT_EFFORT_PROFILES.low],
        medium: [...CURSOR_DEFAULT_EFFORT_PROFILES.medium],
        high: [...CURSOR_DEFAULT_EFFORT_PROFILES.high],
      }),
      ownedFlags: CURSOR_OWNED_FLAGS,
      isEffortKnob: isCursorEffortKnob,
      planTurn: async (request) => {
        const { CursorStreamParser } = await import("./cursor-stream-parser.js");
        return {
          args: buildCursorArgs(request),
          stdin: request.prompt,
          parser: new CursorStreamParser(),
          outcome: cursorTurnOutcome,
        };
      },
    },
    options,
  );
}

/** cursor-agent's answer to a `--resume` whose chat it does not have (deleted state, or another machine). */
const LOST_CONVERSATION = /\b(?:chat|session|conversation)\b[^\n]*\bnot found\b|\bno (?:chat|session|conversation) found\b/i;

/** Decides how a finished (not aborted) run ended, from the process result and what its output said. */
export function cursorTurnOutcome(run: ProviderProcessResult, summary: CursorStreamSummary): ProviderTurnOutcome {
  const signedOut = summary.notAuthenticatedText ?? (isCursorLoginRequiredText(run.stderr) ? run.stderr.trim() : null);
  if (signedOut !== null) {
    return {
      ok: false,
      error: new PedelecError(
        "PROVIDER_NOT_AUTHENTICATED",
        `cursor-agent is not signed in (${signedOut}); run "${CURSOR_LOGIN_COMMAND}" in a terminal`,
        { provider: "cursor", providerMessage: signedOut, fixCommand: CURSOR_LOGIN_COMMAND },
      ),
    };
  }
  if (run.exitCode !== 0) {
    const error = exitFailure("cursor-agent", run, summary.errorMessage ?? "");
    return LOST_CONVERSATION.test(run.stderr) ? { ok: false, error, conversationLost: true } : { ok: false, error };
  }
  if (summary.errorMessage !== null) {
    return { ok: false, error: new PedelecError("PROVIDER_FAILED", summary.errorMessage) };
  }
  if (summary.problem !== null) {
    return { ok: false, error: unreadableLineFailure("cursor-agent", summary.problem, summary.invalidLineCount) };
  }
  if (summary.result === null) {
    return {
      ok: false,
      error: new PedelecError("PROVIDER_OUTPUT_INVALID", "cursor-agent ended without a result", {
        ignoredLineCount: summary.ignoredLineCount,
        ignoredLineSamples: summary.ignoredLineSamples,
        unknownLineCount: summary.unknownLineCount,
        droppedLineCount: summary.droppedLineCount,
        stderr: run.stderr,
      }),
    };
  }
  if (!summary.result.ok) {
    return { ok: false, error: new PedelecError("PROVIDER_FAILED", summary.result.message, { subtype: summary.result.subtype }) };
  }
  return { ok: true };
}

/** `cursor-agent status` exits non-zero saying "Not authenticated" (or "not logged in") when nobody is signed in. */
function isCursorSignedOut(output: string, exitCode: number | null): boolean {
  return exitCode !== 0 && /\bnot (authenticated|logged in)\b/i.test(output);
}
