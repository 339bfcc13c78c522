import type { JsonValue } from "./domain.js";
import { isErrorCode } from "./error-codes.js";
import { checkJsonLimits } from "./json-limits.js";
import { PedelecError } from "./pedelec-error.js";
import type { ReadMessage } from "./request-client.js";
import type { WireError } from "./wire-error.js";

// `pedelec-cli` starts once per tool call, so it reads Core's one answer with these plain checks instead of loading the
// schema library. Each accepts exactly what its schema in core-wire.ts / requests.ts accepts; a test holds them together.

/** What Core sends a connection that makes one request and follows no session. */
export type CoreReplyFrame =
  | { kind: "response"; id: string; ok: true; result: unknown }
  | { kind: "response"; id: string; ok: false; error: WireError }
  | { kind: "fatal"; error: WireError };

const MAX_REQUEST_ID_LENGTH = 128;

/**
 * Reads a frame from Core on such a connection: a response or a fatal frame, as coreServerFrameSchema accepts them.
 * Events and script output never go to it, so any other frame is malformed.
 */
export function readCoreReplyFrame(raw: unknown): ReadMessage<CoreReplyFrame> {
  const malformed = (reason: string): ReadMessage<CoreReplyFrame> => ({
    kind: "malformed",
    id: isRecord(raw) && isRequestId(raw.id) ? raw.id : undefined,
    error: new PedelecError("SDK_PROTOCOL_ERROR", `Core sent a frame that does not match the protocol: ${reason}`),
    raw,
  });
  if (!isRecord(raw)) return malformed("not an object");
  if (raw.kind === "fatal") {
    if (!isWireError(raw.error)) return malformed("a fatal frame without a valid error");
    return { kind: "other", message: { kind: "fatal", error: wireErrorOf(raw.error) } };
  }
  if (raw.kind !== "response") return malformed("not a response");
  if (!isRequestId(raw.id)) return malformed("a response without a valid id");
  const id = raw.id;
  if (raw.ok === true) {
    const result = raw.result;
    if (result === undefined) return malformed("a response without a result");
    return { kind: "reply", id, message: { kind: "response", id, ok: true, result }, outcome: { ok: true, result } };
  }
  if (raw.ok !== false) return malformed("a response whose ok is not a boolean");
  if (!isWireError(raw.error)) return malformed("an error response without a valid error");
  const error = wireErrorOf(raw.error);
  return { kind: "reply", id, message: { kind: "response", id, ok: false, error }, outcome: { ok: false, error: PedelecError.fromWire(error) } };
}

/** The result of `toolCall`: `{ result }`, a JSON value within the limits of a tool result. */
export function checkToolCallResult(result: unknown): { result: JsonValue } {
  if (!isRecord(result)) throw new PedelecError("SDK_PROTOCOL_ERROR", "Core answered toolCall with an invalid result: not an object");
  const limits = checkJsonLimits(result.result);
  if (!limits.ok) throw new PedelecError("SDK_PROTOCOL_ERROR", `Core answered toolCall with an invalid result: ${limits.message}`);
  return { result: result.result as JsonValue };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRequestId(value: unknown): value is string {
  return typeof value === "string" && value.length >= 1 && value.length <= MAX_REQUEST_ID_LENGTH;
}

function isWireError(value: unknown): value is WireError {
  return isRecord(value) && isErrorCode(value.code) && typeof value.message === "string";
}

/** The error's own fields only, as the schema would keep them. */
function wireErrorOf(error: WireError): WireError {
  return error.details === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, details: error.details };
}
