import type { ProviderCode } from "./domain.js";
import type { ErrorCode } from "./error-codes.js";
import type { ProtocolPart } from "./protocol-version.js";

// Plain data, no schema library: PedelecError reads this in every process, the agent's commands included.

/**
 * What to do next about each code, in one or two sentences a person can act on. A code added to the catalogue without
 * a remedy does not compile. docs/errors.md repeats each one under its code (a test keeps them equal).
 */
export const ERROR_REMEDIES: Readonly<Record<ErrorCode, string>> = {
  // page ↔ extension
  EXTENSION_UNAVAILABLE:
    "Install the Pedelec extension (from a Pedelec checkout: chrome://extensions → Developer mode → Load unpacked → `packages/extension/dist`), then reload this page.",
  EXTENSION_DISCONNECTED:
    "Nothing to fix: the extension restarted and the session re-attaches by itself. Send your message again if its answer never came.",
  SDK_ORIGIN_UNAVAILABLE: "Create the Pedelec client in a normal top-level page, not in a sandboxed frame or a `data:` document.",
  INVALID_ORIGIN: "Serve the app over `https://`, or from `http://localhost` or `http://127.0.0.1` while developing.",
  STORAGE_ERROR: "Try again; if it keeps failing, reload the Pedelec extension or restart the browser.",
  SDK_BRIDGE_TIMEOUT:
    "Try again: the first request after a cold start can be slow. If it keeps timing out, raise `bridgeTimeoutMs` in `new Pedelec()`.",
  SDK_TRANSPORT_ERROR: "Try again; if it keeps failing, report the message.",
  SDK_PROTOCOL_ERROR:
    "Update Pedelec so that it matches this page's SDK version (then reload the extension), or use the SDK version that matches the installed Pedelec.",
  PROTOCOL_VERSION_MISMATCH:
    "Update the part of Pedelec that `details.part` names (the SDK, the extension, the native host or Core) to a version that speaks `details.expected`, then reload the page.",
  // approval
  CREATE_SESSION_NOT_APPROVED: "Connect again (`createSession()`) and approve this site in the Pedelec popup.",
  APPROVAL_REJECTED: "This site was refused. To allow it, approve it in the Pedelec popup (under Recently refused), then connect again.",
  APPROVAL_TIMEOUT: "Nobody answered in time: connect again and answer in the Pedelec approval window.",
  OPEN_POPUP_FAILED: "Open a normal browser window, then connect again so that Pedelec can ask for approval.",
  THREAD_ACCESS_DENIED: "Run `pedelec-cli` and `pedelec-ts-runtime` only inside an agent turn, whose environment Core prepares.",
  // native / Core transport
  NATIVE_HOST_UNAVAILABLE:
    "Run `npx pedelec install` in your Pedelec checkout (it registers the native host with the browser), then reload this page.",
  NATIVE_CONNECTION_CLOSED:
    "The link to Pedelec on this computer broke: your session resumes on the next message. If it keeps happening, run `npx pedelec doctor`.",
  CORE_RUNTIME_UNAVAILABLE: "Core stopped: your session resumes on the next message. If Core does not come back, run `npx pedelec doctor`.",
  IPC_UNAVAILABLE: "Core is not answering on its socket: your session resumes on the next message. `npx pedelec status` says whether Core runs.",
  MESSAGE_TOO_LARGE: "Send less at once: pass large data as files (`uploadAsset()`, `readAsset()`), not in messages or tool results.",
  // provider / configuration
  DEFAULT_PROVIDER_NOT_SET: "Pick a provider, or set a default with `npx pedelec config set defaultProvider claude`.",
  DEFAULT_PROVIDER_UNAVAILABLE:
    "Pick a provider that `npx pedelec providers` lists as available, or change the default with `npx pedelec config set defaultProvider <provider>`.",
  PROVIDER_UNAVAILABLE:
    "Install the agent's CLI and sign in to it, then run `npx pedelec install` so that Pedelec finds it; `npx pedelec providers` checks the result.",
  PROVIDER_NOT_AUTHENTICATED: "Sign in to the agent's CLI in a terminal (the message names the command), then send your message again.",
  PROVIDER_FAILED: "Send your message again; if it fails the same way, start a session with another model or effort level.",
  PROVIDER_OVERLOADED: "Wait a minute, then send your message again: the model's service is busy or rate-limited, not broken.",
  PROVIDER_OUTPUT_INVALID: "Send your message again; if it repeats, check the CLI's version with `npx pedelec providers` and report it.",
  PROVIDER_TIMEOUT:
    "Send your message again; if the model keeps not answering, check the agent's network or endpoint, or raise `modelResponseTimeoutSeconds` with `npx pedelec config set`.",
  EFFORT_PROFILE_INVALID:
    "Pick another effort level, or fix the profile with `npx pedelec config set effortProfiles.<provider>.<level> '<JSON array>'`.",
  EFFORT_NOT_SUPPORTED: "Pick one of the levels the message names for this provider (`details.supported`), or leave out `effort`.",
  MODEL_REQUIRED: "Choose a model, or set a default with `npx pedelec config set defaultModels.ollama <model>`.",
  INVALID_INPUT: "Fix the call as the message says; the same input gets the same answer.",
  OLLAMA_API_KEY_REQUIRED:
    "Set a key with `npx pedelec config set ollama.apiKey -`, which asks for it (any value, such as `ollama`, for a local Ollama), or in the control panel (`npx pedelec open`).",
  OLLAMA_AUTH_FAILED:
    "Set the key the endpoint accepts with `npx pedelec config set ollama.apiKey -`, which asks for it, or in the control panel (`npx pedelec open`).",
  OLLAMA_MODEL_NOT_FOUND: "Pick a model the endpoint has, or install it with `ollama pull <model>`.",
  OLLAMA_BASE_URL_INVALID: "Fix the address, e.g. `npx pedelec config set ollama.baseUrl http://127.0.0.1:11434`.",
  OLLAMA_UNAVAILABLE: "Start Ollama (`ollama serve`) or fix `ollama.baseUrl`, then try again.",
  OLLAMA_REQUEST_FAILED: "Send your message again; if it repeats, the Ollama server needs fixing (its reason is in the message).",
  OLLAMA_RESPONSE_INVALID: "Send your message again; if it repeats, check that `ollama.baseUrl` points at an Ollama API.",
  AGENT_TOOL_ROUNDS_EXCEEDED: "Ask for something narrower, or use a stronger model.",
  AGENT_TOOL_CALLS_EXCEEDED: "Nothing to do: the model is told and makes fewer calls; if it keeps flooding, use another model.",
  AGENT_WRITE_BUDGET_EXCEEDED: "Nothing to do: the model is told; ask for large files in several turns, or to generate them with a script.",
  AGENT_TURN_LIMIT_EXCEEDED: "Send a narrower request; if it repeats, check that `ollama.baseUrl` points at a working model server.",
  // session / turn
  SESSION_BUSY: "Wait for the running turn to finish (or stop it), then send again.",
  SESSION_LIMIT_REACHED:
    "End sessions this site no longer needs, then create the new one; a user can raise the limit with `npx pedelec config set limits.liveSessionsPerOrigin <n>`.",
  SESSION_ENDED: "This session is over: start a new one.",
  THREAD_NOT_FOUND: "This session no longer exists: forget its id and start a new one.",
  SESSION_ERROR: "Core stopped during the turn: your session resumes on the next message, so send it again.",
  PREPARE_FAILED: "Nothing to do: the first message starts the session instead.",
  SEND_TEXT_FAILED: "Unless the session shows it is running, send the message again.",
  TURN_CANCELLED: "Nothing to fix: the turn was stopped on purpose. Send a new message to go on.",
  END_SESSION_FAILED: "Call `end()` again; a session left behind also ends when its last page goes away.",
  AUTO_END_SESSION_FAILED: "Nothing to do: the session expires on its own after `sessionRetentionDays`.",
  SESSION_STORE_FAILED:
    "Fix the file the message names (free disk space, stop the other process, or move the file aside), then restart Core with `npx pedelec stop`.",
  // workspace
  WORKSPACE_PATH_INVALID: "Choose another folder, or leave `workspace` out to get a managed one.",
  WORKSPACE_LIST_TOO_LARGE: "List a subfolder: pass its workspace-relative path to `listFiles(path)` or `listFolders(path)`.",
  DISK_SPACE_LOW:
    "Free space on the disk that holds the workspace, then try again; a user can lower the floor with `npx pedelec config set limits.minFreeDiskBytes <bytes>`.",
  // tools
  TOOL_NOT_FOUND: "Call one of the tools the message lists; if agents keep guessing, make the tool names and descriptions clearer.",
  TOOL_ARGS_INVALID: "Send arguments that match the tool's schema; the message lists what is wrong.",
  TOOL_TIMEOUT: "Give slow tools a larger `timeoutMs` in `defineTool()`, and make handlers stop when `context.signal` aborts.",
  TOOL_HANDLER_NOT_FOUND: "Register a handler for every declared tool (in `defineTool()` or with `onTool()`), after `resumeSession()` too.",
  TOOL_HANDLER_ERROR: "Fix the tool's handler, or make the errors it throws tell the agent what to do instead.",
  TOOL_RESULT_INVALID: "Return plain JSON from the handler; put large data in a file with `uploadAsset()` and return its path.",
  SUBMIT_TOOL_RESULT_FAILED: "Nothing to repair for this call; if its cause is `TOOL_TIMEOUT`, give the tool a larger `timeoutMs`.",
  TOOL_CALL_NOT_PENDING: "Nothing to do: the call is already over.",
  TOOL_CALL_CLAIMED: "Nothing to do: another tab answers this call.",
  // assets
  ASSET_TOO_LARGE: "Split or compress the file: one asset may hold at most 100 MiB.",
  ASSET_QUOTA_EXCEEDED:
    "Delete assets no longer needed or end other sessions of this site, then upload again; a user can raise the limit named in `details.setting` with `npx pedelec config set`.",
  ASSET_UPLOAD_SERVER_UNAVAILABLE: "Try again in a moment; if it persists, restart Core with `npx pedelec stop` (the next request starts it).",
  ASSET_UPLOAD_TICKET_EXPIRED: "Upload again: every `uploadAsset()` gets a fresh ticket.",
  ASSET_UPLOAD_UNAUTHORIZED: "Upload again, one upload at a time per session.",
  ASSET_UPLOAD_SIZE_MISMATCH: "Upload the file again as it is now.",
  ASSET_UPLOAD_FAILED: "Upload again; if it fails again, check the free disk space.",
  ASSET_LIST_FAILED: "Try again: Core repairs a session's folders that were changed from outside before it lists them.",
  ASSET_PATH_INVALID:
    "Use a path such as `/inbox/report.csv`: it starts with `/`, has no empty, `.` or `..` segments, no invisible or bidi control characters, and no name ending in a space or a dot.",
  ASSET_NOT_FOUND: "Check `listAssets()`; if the agent is to write the file, read it after the turn completes.",
  ASSET_NOT_FILE: "Use a path that names a file, not a folder.",
  ASSET_READ_TOO_LARGE: 'Read it as `"file"` and process it in pieces.',
  ASSET_DOWNLOAD_TICKET_EXPIRED: "Read again: every `readAsset()` gets a fresh ticket.",
  ASSET_DOWNLOAD_UNAUTHORIZED: "Read again with `readAsset()`.",
  ASSET_READ_FAILED: "Read again, once the agent has finished writing the file.",
  ASSET_TEXT_DECODE_FAILED: 'Read it as `"file"`: it is not UTF-8 text.',
  ASSET_INVALID_JSON: 'Read it as `"text"` to see what is there, or ask the agent to fix the file.',
  // script runtime
  DENO_UNAVAILABLE:
    "Install what the message names (`apt-get install -y bubblewrap` on Debian and Ubuntu) or reinstall Pedelec with `npm ci`; `npx pedelec doctor` checks it.",
  DENO_ENTRY_INVALID: "Give a workspace-relative script path such as `scripts/report.ts`, and import only files inside the workspace.",
  DENO_IMPORT_MAP_INVALID: "Fix the import map entry the message names.",
  DENO_TIMEOUT: "Make the script faster, or run it with a larger timeout.",
  DENO_CANCELLED: "Run the script again if it still matters.",
  DENO_MEMORY_LIMIT: "Process less at once: stream the data, or split the work over several runs.",
  FULL_ACCESS_NOT_GRANTED: 'Use `access: "sandbox"`, or grant this site Full Access in the Pedelec extension\'s options page.',
  FULL_ACCESS_ATTESTATION_INVALID: "Run `npx pedelec install` again, then restart Core with `npx pedelec stop`.",
  FULL_ACCESS_ATTESTATION_EXPIRED: "Try again: every request gets a fresh attestation.",
  FULL_ACCESS_ATTESTATION_REPLAYED: "Try again once; if it happens again, report it.",
};

/** How to sign in to each provider's CLI (PROVIDER_NOT_AUTHENTICATED), with the command its own docs give. */
export const PROVIDER_SIGN_IN_REMEDIES: Readonly<Record<ProviderCode, string>> = {
  codex: "Run `codex login` in a terminal, then send your message again.",
  claude: "Run `claude auth login` in a terminal (or start `claude` and sign in), then send your message again.",
  opencode: "Run `opencode auth login` in a terminal, then send your message again.",
  cursor: "Run `cursor-agent login` in a terminal, then send your message again.",
  antigravity: "Run `agy` once in a terminal and sign in, then send your message again.",
  ollama: "Set the key the endpoint accepts with `npx pedelec config set ollama.apiKey -` (it asks for the key), then send your message again.",
};

/** How to make each provider runnable (PROVIDER_UNAVAILABLE): install its CLI, sign in, and let Pedelec find it. */
export const PROVIDER_INSTALL_REMEDIES: Readonly<Record<ProviderCode, string>> = {
  codex: "Install Codex (`npm install -g @openai/codex`), sign in with `codex login`, then run `npx pedelec install`.",
  claude: "Install Claude Code (`npm install -g @anthropic-ai/claude-code`), sign in with `claude auth login`, then run `npx pedelec install`.",
  opencode: "Install OpenCode (`npm install -g opencode-ai`), sign in with `opencode auth login`, then run `npx pedelec install`.",
  cursor:
    "Install the Cursor CLI (`curl https://cursor.com/install -fsS | bash`), sign in with `cursor-agent login`, then run `npx pedelec install`.",
  antigravity:
    "Install Google Antigravity (https://antigravity.google), which puts `agy` on PATH, run `agy` once in a terminal to sign in, then run `npx pedelec install`.",
  ollama:
    "Start Ollama (`ollama serve`) and set its key with `npx pedelec config set ollama.apiKey -` (it asks for the key); `npx pedelec providers` says what is missing.",
};

/**
 * The remedy for an error: the code's own, or a sharper one where `details` says more (which provider is not signed in
 * or not installed; what made a prepare turn fail).
 */
export function remedyFor(code: ErrorCode, details?: unknown): string {
  switch (code) {
    case "PROVIDER_NOT_AUTHENTICATED":
      return perProvider(PROVIDER_SIGN_IN_REMEDIES, details) ?? ERROR_REMEDIES[code];
    case "PROVIDER_UNAVAILABLE":
      return perProvider(PROVIDER_INSTALL_REMEDIES, details) ?? ERROR_REMEDIES[code];
    case "DEFAULT_PROVIDER_UNAVAILABLE": {
      const install = perProvider(PROVIDER_INSTALL_REMEDIES, details);
      return install === undefined
        ? ERROR_REMEDIES[code]
        : `${install} Or pick another default: \`npx pedelec config set defaultProvider <provider>\`.`;
    }
    case "PREPARE_FAILED": {
      // A set-up problem behind the failed warm-up is what the user has to fix.
      const cause = field(details, "cause");
      const causeCode = field(cause, "code");
      if (typeof causeCode === "string" && causeCode !== code && Object.hasOwn(ERROR_REMEDIES, causeCode)) {
        return remedyFor(causeCode as ErrorCode, field(cause, "details"));
      }
      return ERROR_REMEDIES[code];
    }
    case "PROTOCOL_VERSION_MISMATCH": {
      const part = field(details, "part");
      return typeof part === "string" && Object.hasOwn(PROTOCOL_UPDATE_REMEDIES, part)
        ? PROTOCOL_UPDATE_REMEDIES[part as ProtocolPart]
        : ERROR_REMEDIES[code];
    }
    default:
      return ERROR_REMEDIES[code];
  }
}

/** What to do when one part speaks an older protocol than its peer, by the part (`details.part`). */
export const PROTOCOL_UPDATE_REMEDIES: Readonly<Record<ProtocolPart, string>> = {
  sdk: "Update this page's `@pedelec/sdk` to the version that matches the installed Pedelec, then reload the page.",
  extension: "Update the Pedelec extension (or reload it after updating Pedelec), then reload the page.",
  "native-host": "Update Pedelec on this computer and register its native host again (`npx pedelec install`), then reload the extension.",
  core: "Update Pedelec on this computer and restart Core with it: `npx pedelec stop && npx pedelec start --detach`.",
};

function perProvider(remedies: Readonly<Record<ProviderCode, string>>, details: unknown): string | undefined {
  const provider = field(details, "provider");
  return typeof provider === "string" && Object.hasOwn(remedies, provider) ? remedies[provider as ProviderCode] : undefined;
}

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null && Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
}
