import { describe, expect, it } from "vitest";
import { SDK_PORT_NAME_PREFIX } from "@pedelec/protocol/page-wire";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import { createPedelecTestKit } from "./index.js";

/** The first message the stand-in extension sends back on a port named `name`, after one getApprovalStatus request. */
async function firstAnswer(name: string): Promise<unknown> {
  const kit = createPedelecTestKit();
  try {
    const port = kit.runtime.connect("any-extension-id", { name });
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer within 2000 ms")), 2_000);
      port.onMessage.addListener((message) => {
        clearTimeout(timer);
        resolve(message);
      });
      port.postMessage({ id: "a1", type: "getApprovalStatus", payload: {} });
    });
  } finally {
    await kit.dispose();
  }
}

describe("the testing kit's extension and the protocol version", () => {
  it("answers a page whose SDK speaks another major with PROTOCOL_VERSION_MISMATCH, as the extension does", async () => {
    expect(await firstAnswer(`${SDK_PORT_NAME_PREFIX}@2.0`)).toMatchObject({
      id: "a1",
      ok: false,
      error: { code: "PROTOCOL_VERSION_MISMATCH", details: { part: "extension", expected: "2.0", actual: PROTOCOL_VERSION } },
    });
  });

  it("serves this SDK, and one whose port name states no version", async () => {
    expect(await firstAnswer(`${SDK_PORT_NAME_PREFIX}@${PROTOCOL_VERSION}`)).toMatchObject({ id: "a1", ok: true });
    expect(await firstAnswer(SDK_PORT_NAME_PREFIX)).toMatchObject({ id: "a1", ok: true });
  });
});
