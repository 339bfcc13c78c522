import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { Activity } from "@pedelec/protocol/session-events";
import type { ProviderTurnOutcome } from "./provider-adapter.js";
import { truncateUtf8 } from "./truncate-utf8.js";

/*
 * Text a provider CLI printed reaches pages: in activity titles and details and in the errors of failed turns. The
 * CLIs quote their model endpoint in it (codex: `…, url: http://127.0.0.1:PORT/v1/responses`; claude: `check your
 * inference gateway (127.0.0.1:PORT)`) and now and then a credential. The page has no business with either, so every
 * such string goes through `scrubProviderText` first.
 *
 * Each rule is a regular expression that V8 runs in time linear in the text: a rule either consumes what it matched,
 * or gives up after a bounded number of characters, or may only start where a run of its characters starts (the
 * lookbehinds), so no start position rescans a long run. The test feeds 1 MB of hostile text through it.
 */

/** What an endpoint (a URL, or a bare address with a port) is replaced with. */
export const ENDPOINT_PLACEHOLDER = "<endpoint>";
/** What a secret (a bearer token, an API key, a password) is replaced with. */
export const SECRET_PLACEHOLDER = "<redacted>";

/** The characters a URL runs on until: whitespace, quotes, angle brackets, backticks and backslashes (JSON escapes). */
const URL_TAIL = String.raw`[^\s"'<>\x60\\]*`;
/** An optional `:port` that is a whole number. */
const PORT = String.raw`(?::\d{1,5}(?!\d))?`;
/** An optional path (or query) right after a bare address. */
const PATH = `(?:[/?]${URL_TAIL})?`;

/** `scheme://anything up to whitespace or a quote`, userinfo, IPv6 hosts and query strings included. */
const URL_WITH_SCHEME = new RegExp(String.raw`(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/${URL_TAIL}`, "g");
/** The `user:password@` of a URL with a scheme. */
const URL_USERINFO = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/)[^\s"'<>\x60\\/@]{1,256}@/g;
/** `user:password@` in front of a bare host (a URL's userinfo goes with its URL). */
const BARE_USERINFO = /(?<![^\s(<"'=,;[])[^\s:@/"'<>()[\]]{1,64}:[^\s@/"'<>()[\]]{1,64}@(?=[A-Za-z0-9[])/g;
/** A dotted IPv4 address, with an optional port and path: `127.0.0.1:8080/v1`. */
const BARE_IPV4 = new RegExp(String.raw`(?<![\w.:-])(?:\d{1,3}\.){3}\d{1,3}(?![\w-]|\.\w)${PORT}${PATH}`, "g");
/** A bracketed IPv6 address, with an optional zone, port and path: `[::1]:8080`, `[fe80::1%eth0]`. */
const BARE_IPV6 = new RegExp(String.raw`\[(?=[0-9A-Fa-f.]{0,40}:)[0-9A-Fa-f:.]{2,45}(?:%[\w.-]{1,16})?\]${PORT}${PATH}`, "g");
/** `localhost:PORT`, with an optional path. */
const BARE_LOCALHOST = new RegExp(String.raw`(?<![\w.-])localhost:\d{1,5}(?!\d)${PATH}`, "gi");
/**
 * `host.name:PORT` with an optional path, unless a `:column` follows (`app.ts:12:5` is a place in a file). A file name
 * with only a line number (`notes.md:12`) looks the same and is replaced too: a lost line number costs less than a
 * leaked gateway.
 */
const BARE_HOST_PORT = new RegExp(String.raw`(?<![\w./:-])(?:[A-Za-z0-9-]{1,63}\.){1,16}[A-Za-z]{2,24}:\d{2,5}(?!\w|[:.]\d)${PATH}`, "g");

/** A value after a name that says it is a credential: `x-api-key: …`, `Authorization: Bearer …`, `"password":"…"`. */
const NAMED_SECRET = new RegExp(
  "(?<![A-Za-z0-9])((?:x-)?api[-_]?key|x-goog-api-key|(?:proxy-)?authorization|(?:access|refresh|auth|id|session)[-_]?token|client[-_]?secret|secret[-_]?key|password|passwd|secret|token)" +
    String.raw`(\\?["']?[ \t]{0,4}[:=][ \t]{0,4}\\?["']?)((?:bearer|basic)[ \t]{1,4})?[^\s"'\\,;&)}\]<>]+`,
  "gi",
);
/** A bearer token anywhere else (`Bearer eyJ…`). */
const BEARER_TOKEN = /(?<![A-Za-z0-9])(bearer)[ \t]{1,8}[A-Za-z0-9._~+/=-]{8,}/gi;
/**
 * Keys recognisable by their shape alone: `sk-…` (Anthropic, OpenAI and their imitators), GitHub, Slack, Google and
 * AWS keys, and JSON Web Tokens.
 */
const SHAPED_KEY =
  /(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})/g;

/**
 * Replaces endpoints with `<endpoint>` and secrets with `<redacted>`: URLs of any scheme (loopback, userinfo, IPv6 and
 * query strings included), bare IPv4 / IPv6 / localhost / host:port addresses, bearer tokens, values of credential
 * names (`x-api-key: …`) and keys of well-known shapes (`sk-…`). Linear in the length of `text`.
 */
export function scrubProviderText(text: string): string {
  if (text === "") return text;
  return scrubSecrets(
    text
      .replace(URL_WITH_SCHEME, replaceEndpoint)
      .replace(BARE_USERINFO, `${SECRET_PLACEHOLDER}@`)
      .replace(BARE_IPV6, replaceEndpoint)
      .replace(BARE_IPV4, replaceEndpoint)
      .replace(BARE_LOCALHOST, replaceEndpoint)
      .replace(BARE_HOST_PORT, replaceEndpoint),
  );
}

/**
 * Replaces secrets only (userinfo, bearer tokens, values of credential names, keys of well-known shapes), keeping
 * addresses: for what the agent did (a command line, its output), where a URL is the user's own business — the agent
 * could as well write it in its answer — while a key that slipped into output should still not be shown.
 */
export function scrubSecrets(text: string): string {
  if (text === "") return text;
  return text
    .replace(URL_USERINFO, `$1${SECRET_PLACEHOLDER}@`)
    .replace(BARE_USERINFO, `${SECRET_PLACEHOLDER}@`)
    .replace(NAMED_SECRET, (_match, name: string, separator: string, scheme: string | undefined) => {
      return `${name}${separator}${scheme ?? ""}${SECRET_PLACEHOLDER}`;
    })
    .replace(BEARER_TOKEN, (_match, word: string) => `${word} ${SECRET_PLACEHOLDER}`)
    .replace(SHAPED_KEY, SECRET_PLACEHOLDER);
}

/**
 * The endpoint placeholder, followed by the punctuation the greedy match took from the sentence around it: trailing
 * `.,;:!?` and closing brackets that the address did not open (`(… url: http://h/v1))`).
 */
function replaceEndpoint(match: string): string {
  let opened = 0;
  let closed = 0;
  for (const character of match) {
    if (character === "(" || character === "[" || character === "{") opened += 1;
    else if (character === ")" || character === "]" || character === "}") closed += 1;
  }
  let end = match.length;
  while (end > 0) {
    const character = match[end - 1] ?? "";
    if (".,;:!?".includes(character)) {
      end -= 1;
    } else if ((character === ")" || character === "]" || character === "}") && closed > opened) {
      end -= 1;
      closed -= 1;
    } else {
      break;
    }
  }
  return ENDPOINT_PLACEHOLDER + match.slice(end);
}

/**
 * `text` scrubbed and cut to at most `maxBytes` UTF-8 bytes, ending in "…" when anything was cut. A long text (a
 * command's whole output) is cut to a few times the bound before it is scrubbed, so its size costs nothing.
 */
export function scrubbedWithin(text: string, maxBytes: number, scrub: (text: string) => string = scrubProviderText): string {
  const bound = maxBytes * 4;
  if (text.length <= bound) return truncateUtf8(scrub(text), maxBytes).text;
  const scrubbed = scrub(text.slice(0, bound));
  const cut = truncateUtf8(scrubbed, maxBytes);
  return cut.truncated ? cut.text : truncateUtf8(`${scrubbed}…`, maxBytes).text;
}

/** How deep `scrubProviderDetails` walks; deeper values are dropped (provider details are one or two levels deep). */
const MAX_DETAIL_DEPTH = 8;

/** A copy of error details with every string in them (object keys aside) scrubbed. */
export function scrubProviderDetails(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubProviderText(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DETAIL_DEPTH) return undefined;
  if (Array.isArray(value)) return value.map((entry) => scrubProviderDetails(entry, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) copy[key] = scrubProviderDetails(entry, depth + 1);
  return copy;
}

/** The same error, its message and details scrubbed. */
export function scrubProviderError(error: PedelecError): PedelecError {
  return new PedelecError(
    error.code,
    scrubProviderText(error.message),
    error.details === undefined ? undefined : scrubProviderDetails(error.details),
  );
}

/** A turn outcome whose error, if any, is scrubbed. */
export function scrubProviderOutcome(outcome: ProviderTurnOutcome): ProviderTurnOutcome {
  return outcome.ok ? outcome : { ...outcome, error: scrubProviderError(outcome.error) };
}

/** An activity whose title and detail are scrubbed. */
export function scrubActivity(activity: Activity): Activity {
  const scrubbed: Activity = { ...activity, title: scrubProviderText(activity.title) };
  if (activity.detail !== undefined) scrubbed.detail = scrubProviderText(activity.detail);
  return scrubbed;
}
