import { ERROR_CODES } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { describe, expect, it } from "vitest";
import { describeError, ERROR_LAYER_LABELS, errorLayerOf, type ErrorLayer } from "./error-layer.js";

describe("errorLayerOf", () => {
  it.each<[string, ErrorLayer]>([
    ["EXTENSION_UNAVAILABLE", "extension"],
    ["EXTENSION_DISCONNECTED", "extension"],
    ["SDK_BRIDGE_TIMEOUT", "extension"],
    ["SDK_PROTOCOL_ERROR", "extension"],
    ["INVALID_ORIGIN", "extension"],
    ["STORAGE_ERROR", "extension"],
    ["APPROVAL_REJECTED", "approval"],
    ["APPROVAL_TIMEOUT", "approval"],
    ["CREATE_SESSION_NOT_APPROVED", "approval"],
    ["OPEN_POPUP_FAILED", "approval"],
    ["THREAD_ACCESS_DENIED", "approval"],
    ["NATIVE_HOST_UNAVAILABLE", "native"],
    ["CORE_RUNTIME_UNAVAILABLE", "native"],
    ["IPC_UNAVAILABLE", "native"],
    ["MESSAGE_TOO_LARGE", "native"],
    ["PROVIDER_NOT_AUTHENTICATED", "provider"],
    ["MODEL_REQUIRED", "provider"],
    ["EFFORT_PROFILE_INVALID", "provider"],
    ["DEFAULT_PROVIDER_NOT_SET", "provider"],
    ["OLLAMA_UNAVAILABLE", "provider"],
    ["SESSION_BUSY", "session"],
    ["TURN_CANCELLED", "session"],
    ["THREAD_NOT_FOUND", "session"],
    ["SEND_TEXT_FAILED", "session"],
    ["TOOL_HANDLER_ERROR", "tool"],
    ["TOOL_TIMEOUT", "tool"],
    ["SUBMIT_TOOL_RESULT_FAILED", "tool"],
    ["WORKSPACE_PATH_INVALID", "workspace"],
    ["DISK_SPACE_LOW", "workspace"],
    ["SESSION_LIMIT_REACHED", "session"],
    ["ASSET_QUOTA_EXCEEDED", "asset"],
    ["ASSET_NOT_FOUND", "asset"],
    ["DENO_TIMEOUT", "script"],
    ["FULL_ACCESS_NOT_GRANTED", "script"],
  ])("%s → %s", (code, layer) => {
    expect(errorLayerOf(code)).toBe(layer);
  });

  it("places every catalogue code in a layer of the chain (none falls through to the page)", () => {
    const unplaced = ERROR_CODES.filter((code) => errorLayerOf(code) === "page");
    expect(unplaced).toEqual([]);
  });

  it("places codes it does not know by prefix, and anything else on the page", () => {
    expect(errorLayerOf("PROVIDER_SOMETHING_NEW")).toBe("provider");
    expect(errorLayerOf("PAGE_ERROR")).toBe("page");
    expect(errorLayerOf("")).toBe("page");
  });

  it("has a label for every layer", () => {
    expect(ERROR_LAYER_LABELS.native).toBe("native host / Core");
    for (const code of ERROR_CODES) expect(ERROR_LAYER_LABELS[errorLayerOf(code)]).toMatch(/\S/);
  });
});

describe("describeError", () => {
  it("keeps a PedelecError's code and message, and tells what to do next", () => {
    expect(describeError(new PedelecError("SESSION_BUSY", "busy"))).toEqual({
      code: "SESSION_BUSY",
      message: "busy",
      remedy: "Wait for the running turn to finish (or stop it), then send again.",
    });
    expect(describeError(new PedelecError("NATIVE_HOST_UNAVAILABLE", "the Pedelec native host is unavailable")).remedy).toContain(
      "`npx pedelec install`",
    );
  });

  it("has a remedy for every catalogue code", () => {
    const without = ERROR_CODES.filter((code) => describeError(new PedelecError(code, "failed")).remedy === undefined);
    expect(without).toEqual([]);
  });

  it("reads the remedy of an error that crossed a boundary as plain data", () => {
    expect(describeError({ code: "SESSION_ENDED", message: "over", remedy: "Start a new one." })).toEqual({
      code: "SESSION_ENDED",
      message: "over",
      remedy: "Start a new one.",
    });
    expect(describeError({ code: "SESSION_ENDED", message: "over", remedy: 3 }).remedy).toBeUndefined();
  });

  it("gives other errors and thrown values the page's code and no remedy", () => {
    expect(describeError(new Error("boom"))).toEqual({ code: "PAGE_ERROR", message: "boom", remedy: undefined });
    expect(describeError("text")).toEqual({ code: "PAGE_ERROR", message: "text", remedy: undefined });
    expect(describeError(null)).toEqual({ code: "PAGE_ERROR", message: "null", remedy: undefined });
  });
});
