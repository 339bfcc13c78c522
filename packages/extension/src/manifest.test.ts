import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";

const manifest = JSON.parse(readFileSync(new URL("../static/manifest.json", import.meta.url), "utf8")) as Record<string, unknown>;

/** Chrome's rule: sha256 of the DER public key, first 32 hex digits, each mapped 0-f → a-p. */
function extensionIdFromKey(base64Key: string): string {
  const digest = createHash("sha256").update(Buffer.from(base64Key, "base64")).digest("hex").slice(0, 32);
  return [...digest].map((digit) => String.fromCharCode("a".charCodeAt(0) + Number.parseInt(digit, 16))).join("");
}

describe("manifest.json", () => {
  it("has a key that yields DEFAULT_EXTENSION_ID", () => {
    expect(typeof manifest.key).toBe("string");
    expect(extensionIdFromKey(manifest.key as string)).toBe(DEFAULT_EXTENSION_ID);
  });

  it("declares the MV3 pieces the worker and pages rely on", () => {
    expect(manifest).toMatchObject({
      manifest_version: 3,
      name: "Pedelec",
      permissions: ["nativeMessaging", "storage"],
      background: { service_worker: "service-worker.js", type: "module" },
      action: { default_popup: "popup.html" },
      options_ui: { page: "options.html", open_in_tab: true },
      externally_connectable: { matches: ["https://*/*", "http://localhost/*", "http://127.0.0.1/*"] },
    });
  });
});
