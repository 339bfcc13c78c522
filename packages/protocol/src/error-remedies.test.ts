import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PROVIDER_CODES, type ProviderCode } from "./domain.js";
import { ERROR_CODES } from "./error-codes.js";
import { ERROR_REMEDIES, PROVIDER_INSTALL_REMEDIES, PROVIDER_SIGN_IN_REMEDIES, remedyFor } from "./error-remedies.js";
import { PedelecError } from "./pedelec-error.js";

const ERRORS_DOC = new URL("../../../docs/errors.md", import.meta.url);

/** The command each provider's CLI documents for signing in (docs of codex, claude, opencode, cursor-agent, agy). */
const SIGN_IN_COMMANDS: Readonly<Record<ProviderCode, string>> = {
  codex: "`codex login`",
  claude: "`claude auth login`",
  opencode: "`opencode auth login`",
  cursor: "`cursor-agent login`",
  antigravity: "`agy`",
  ollama: "`npx pedelec config set ollama.apiKey -`",
};

/** Code → the text of its `- **Remedy:**` line in docs/errors.md, continuation lines joined. */
function remediesInDoc(text: string): Map<string, string> {
  const remedies = new Map<string, string>();
  let code: string | undefined;
  let remedy: string | undefined;
  const flush = (): void => {
    if (code !== undefined && remedy !== undefined) remedies.set(code, remedy);
    remedy = undefined;
  };
  for (const line of text.split("\n")) {
    const heading = /^#{2,3} (.*)$/.exec(line);
    if (heading) {
      flush();
      code = /^`([A-Z0-9_]+)`$/.exec(heading[1]!)?.[1];
      continue;
    }
    const start = /^- \*\*Remedy:\*\* (.*)$/.exec(line);
    if (start) {
      flush();
      remedy = start[1]!;
    } else if (remedy !== undefined && line.startsWith("  ")) {
      remedy += ` ${line.trim()}`;
    } else {
      flush();
    }
  }
  flush();
  return remedies;
}

describe("the remedy of every code", () => {
  it("is a short sentence for every code of the catalogue", () => {
    for (const code of ERROR_CODES) {
      const remedy = ERROR_REMEDIES[code];
      expect(remedy, code).toMatch(/^[A-Z`].{9,}[.)]$/s);
      expect(remedy.length, code).toBeLessThanOrEqual(200);
      expect(remedyFor(code), code).toBe(remedy);
    }
    expect(Object.keys(ERROR_REMEDIES).sort()).toEqual([...ERROR_CODES].sort());
  });

  it("names each provider's real sign-in command when the provider is known", () => {
    for (const provider of PROVIDER_CODES) {
      const remedy = remedyFor("PROVIDER_NOT_AUTHENTICATED", { provider, providerMessage: "Not logged in" });
      expect(remedy, provider).toBe(PROVIDER_SIGN_IN_REMEDIES[provider]);
      expect(remedy, provider).toContain(SIGN_IN_COMMANDS[provider]);
    }
    expect(remedyFor("PROVIDER_NOT_AUTHENTICATED", { provider: "codex" })).toBe("Run `codex login` in a terminal, then send your message again.");
    expect(remedyFor("PROVIDER_NOT_AUTHENTICATED", { provider: "claude" })).toMatch(
      /^Run `claude auth login` in a terminal \(or start `claude` and sign in\)/,
    );
  });

  it("says how to install and sign in to the provider that is not available", () => {
    for (const provider of PROVIDER_CODES) {
      const remedy = remedyFor("PROVIDER_UNAVAILABLE", { provider, executablePath: null });
      expect(remedy, provider).toBe(PROVIDER_INSTALL_REMEDIES[provider]);
      expect(remedy, provider).toContain(SIGN_IN_COMMANDS[provider]);
    }
    expect(remedyFor("PROVIDER_UNAVAILABLE", { provider: "codex" })).toContain("`npm install -g @openai/codex`");
    const defaultMissing = remedyFor("DEFAULT_PROVIDER_UNAVAILABLE", { provider: "claude" });
    expect(defaultMissing).toContain("`npm install -g @anthropic-ai/claude-code`");
    expect(defaultMissing).toContain("`npx pedelec config set defaultProvider <provider>`");
  });

  it("falls back to the code's own remedy when the details do not name a provider it knows", () => {
    for (const details of [undefined, null, "codex", {}, { provider: "gemini" }, { provider: "toString" }, { provider: 7 }]) {
      expect(remedyFor("PROVIDER_NOT_AUTHENTICATED", details)).toBe(ERROR_REMEDIES.PROVIDER_NOT_AUTHENTICATED);
      expect(remedyFor("PROVIDER_UNAVAILABLE", details)).toBe(ERROR_REMEDIES.PROVIDER_UNAVAILABLE);
    }
  });

  it("gives a failed prepare the remedy of what made it fail", () => {
    const cause = new PedelecError("PROVIDER_NOT_AUTHENTICATED", "codex is not signed in", { provider: "codex" }).toWire();
    expect(remedyFor("PREPARE_FAILED", { cause })).toBe(PROVIDER_SIGN_IN_REMEDIES.codex);
    expect(remedyFor("PREPARE_FAILED", { cause: { code: "OLLAMA_UNAVAILABLE", message: "down" } })).toBe(ERROR_REMEDIES.OLLAMA_UNAVAILABLE);
    expect(remedyFor("PREPARE_FAILED", { cause: { code: "NO_SUCH_CODE", message: "?" } })).toBe(ERROR_REMEDIES.PREPARE_FAILED);
    expect(remedyFor("PREPARE_FAILED", { cause: { code: "PREPARE_FAILED", message: "again" } })).toBe(ERROR_REMEDIES.PREPARE_FAILED);
    expect(remedyFor("PREPARE_FAILED")).toBe(ERROR_REMEDIES.PREPARE_FAILED);
  });

  it("points at the set-up commands for the links that break before a session can run", () => {
    expect(ERROR_REMEDIES.NATIVE_HOST_UNAVAILABLE).toContain("`npx pedelec install`");
    expect(ERROR_REMEDIES.EXTENSION_UNAVAILABLE).toContain("`packages/extension/dist`");
    expect(ERROR_REMEDIES.CORE_RUNTIME_UNAVAILABLE).toMatch(/^Core stopped: your session resumes on the next message\./);
    expect(ERROR_REMEDIES.CORE_RUNTIME_UNAVAILABLE).toContain("`npx pedelec doctor`");
    expect(ERROR_REMEDIES.CREATE_SESSION_NOT_APPROVED).toContain("approve this site in the Pedelec popup");
  });
});

describe("PedelecError.remedy", () => {
  it("is worked out from the code and details, also for an error read back from the wire", () => {
    const error = new PedelecError("PROVIDER_NOT_AUTHENTICATED", "cursor-agent is not signed in", {
      provider: "cursor",
      fixCommand: "cursor-agent login",
    });
    expect(error.remedy).toBe(PROVIDER_SIGN_IN_REMEDIES.cursor);
    const wire = error.toWire();
    expect(wire).toEqual({
      code: "PROVIDER_NOT_AUTHENTICATED",
      message: "cursor-agent is not signed in",
      details: { provider: "cursor", fixCommand: "cursor-agent login" },
    });
    expect(PedelecError.fromWire(JSON.parse(JSON.stringify(wire))).remedy).toBe(PROVIDER_SIGN_IN_REMEDIES.cursor);
    expect(PedelecError.from(new Error("boom"), "SESSION_ERROR").remedy).toBe(ERROR_REMEDIES.SESSION_ERROR);
  });

  it("is not an own property, so errors serialize and compare as before", () => {
    const error = new PedelecError("SESSION_BUSY", "busy");
    expect(Object.keys(error)).not.toContain("remedy");
    expect(JSON.stringify(error.toWire())).toBe('{"code":"SESSION_BUSY","message":"busy"}');
  });
});

describe("docs/errors.md", () => {
  const inDoc = remediesInDoc(readFileSync(ERRORS_DOC, "utf8"));

  it("shows every code's remedy, word for word as the table has it", () => {
    const problems: string[] = [];
    for (const code of ERROR_CODES) {
      const shown = inDoc.get(code);
      if (shown === undefined) problems.push(`${code} has no Remedy line`);
      else if (shown !== ERROR_REMEDIES[code]) problems.push(`${code}: the doc says "${shown}", the table "${ERROR_REMEDIES[code]}"`);
    }
    expect(problems).toEqual([]);
  });

  it("shows each provider's sign-in and install remedies as the tables have them", () => {
    const text = readFileSync(ERRORS_DOC, "utf8");
    // A `|` inside a table cell is written `\|` (Cursor's install command pipes curl into bash).
    const cell = (remedy: string): string => remedy.replaceAll("|", "\\|");
    for (const provider of PROVIDER_CODES) {
      expect(text, provider).toContain(
        `| \`${provider}\` | ${cell(PROVIDER_SIGN_IN_REMEDIES[provider])} | ${cell(PROVIDER_INSTALL_REMEDIES[provider])} |`,
      );
    }
  });

  it("is read as the check expects", () => {
    const sample =
      "## Core\n\n### `SESSION_BUSY`\n- **What to do:** wait.\n- **Remedy:** Wait for it,\n  then send again.\n\n### `SESSION_ENDED`\n- **Means:** over.\n";
    expect([...remediesInDoc(sample)]).toEqual([["SESSION_BUSY", "Wait for it, then send again."]]);
  });
});
