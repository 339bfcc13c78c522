import { describe, expect, it } from "vitest";
import { describeApproval } from "./approval-text.js";

const EXTENSION_ID = "jipdjobnmfeagcdooiopbbkmbpgbkdhe";

describe("describeApproval", () => {
  it("says when the extension is missing and how to point at another id", () => {
    const text = describeApproval({ installed: false, approved: false, origin: "http://a", appConnected: false, appLaunched: false }, EXTENSION_ID);
    expect(text.text).toMatch(/not installed/);
    expect(text.hint).toContain("?extensionId=");
    expect(text.hint).toContain(EXTENSION_ID);
  });

  it("asks to approve the origin in the popup when it is not approved", () => {
    const text = describeApproval(
      { installed: true, approved: false, origin: "http://127.0.0.1:5000", appConnected: true, appLaunched: false },
      EXTENSION_ID,
    );
    expect(text.text).toMatch(/installed; origin http:\/\/127\.0\.0\.1:5000 not approved; desktop app connected/);
    expect(text.hint).toMatch(/approve http:\/\/127\.0\.0\.1:5000 in the Pedelec extension popup/);
  });

  it("needs no hint once approved", () => {
    const text = describeApproval({ installed: true, approved: true, origin: "http://a", appConnected: false, appLaunched: false }, EXTENSION_ID);
    expect(text.text).toMatch(/ approved; desktop app not connected yet/);
    expect(text.hint).toBe("");
  });
});
