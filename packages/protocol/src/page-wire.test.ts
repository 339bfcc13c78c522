import { describe, expect, it } from "vitest";
import { isPageRequestType, pageRequestSchemas } from "./page-wire.js";
import { SESSION_REQUEST_TYPES } from "./requests.js";

const sessionId = "session-0001";
const toolRequestId = "tool-request-1";

describe("the page request table", () => {
  it("holds the extension's own requests and every session request but the ones only the extension makes", () => {
    expect(Object.keys(pageRequestSchemas).sort()).toEqual(
      ["getApprovalStatus", ...SESSION_REQUEST_TYPES.filter((type) => type !== "subscribeSession")].sort(),
    );
    expect(isPageRequestType("subscribeSession")).toBe(false);
  });

  it("refuses the fields the extension stamps from the page's port", () => {
    const claim = { sessionId, toolRequestId };
    expect(pageRequestSchemas.claimToolCall.payload.safeParse(claim).success).toBe(true);
    expect(pageRequestSchemas.claimToolCall.payload.safeParse({ ...claim, claimant: "route-1" }).success).toBe(false);
    const submit = { sessionId, toolRequestId, outcome: { ok: true, result: null } };
    expect(pageRequestSchemas.submitToolResult.payload.safeParse(submit).success).toBe(true);
    expect(pageRequestSchemas.submitToolResult.payload.safeParse({ ...submit, claimant: "route-1" }).success).toBe(false);
    expect(pageRequestSchemas.endSession.payload.safeParse({ sessionId }).success).toBe(true);
    expect(pageRequestSchemas.endSession.payload.safeParse({ sessionId, reason: "disconnected" }).success).toBe(false);
  });
});
