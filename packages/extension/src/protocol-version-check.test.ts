import { describe, expect, it } from "vitest";
import { SDK_PORT_NAME, SDK_PORT_NAME_PREFIX } from "@pedelec/protocol/page-wire";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";
import { NativeLink } from "./native-link.js";
import { FakeNativeHost, FakePagePort } from "./testing/fakes.js";
import { APP, responseOf, setup } from "./testing/gateway-harness.js";

const sender = { origin: APP, url: `${APP}/board` };

describe("the extension's side of the protocol version handshake", () => {
  describe("with a page", () => {
    it("answers every request of a page whose SDK speaks a newer major with PROTOCOL_VERSION_MISMATCH naming the extension", async () => {
      const context = await setup({ approved: [APP] });
      const port = new FakePagePort(`${SDK_PORT_NAME_PREFIX}@2.0`, sender);
      context.gateway.accept(port);
      port.fromPage({ id: "a1", type: "getApprovalStatus", payload: {} });
      port.fromPage({ id: "c1", type: "createSession", payload: {} });
      expect(await responseOf(port, "a1")).toMatchObject({
        ok: false,
        error: { code: "PROTOCOL_VERSION_MISMATCH", details: { part: "extension", expected: "2.0", actual: PROTOCOL_VERSION } },
      });
      expect(await responseOf(port, "c1")).toMatchObject({ ok: false, error: { code: "PROTOCOL_VERSION_MISMATCH" } });
      // Nothing reached the desktop, and the port stays open to say so.
      expect(context.host.sent).toEqual([]);
      expect(port.disconnectedByExtension).toBe(false);
      expect(context.warnings.map((warning) => warning.code)).toContain("PROTOCOL_VERSION_MISMATCH");
    });

    it("names the SDK when the page's major is older", async () => {
      const context = await setup({ approved: [APP] });
      const port = new FakePagePort(`${SDK_PORT_NAME_PREFIX}@0.4`, sender);
      context.gateway.accept(port);
      port.fromPage({ id: "a1", type: "getApprovalStatus", payload: {} });
      expect(await responseOf(port, "a1")).toMatchObject({
        ok: false,
        error: { code: "PROTOCOL_VERSION_MISMATCH", details: { part: "sdk", expected: PROTOCOL_VERSION, actual: "0.4" } },
      });
    });

    it("serves a page of the same major, or one whose SDK predates the handshake", async () => {
      for (const name of [SDK_PORT_NAME, `${SDK_PORT_NAME_PREFIX}@1.9`, SDK_PORT_NAME_PREFIX]) {
        const context = await setup({ approved: [APP] });
        const port = new FakePagePort(name, sender);
        context.gateway.accept(port);
        port.fromPage({ id: "a1", type: "getApprovalStatus", payload: {} });
        expect(await responseOf(port, "a1"), name).toMatchObject({ ok: true, result: { approved: true } });
      }
    });

    it("closes a port whose name is not an SDK's", async () => {
      const context = await setup();
      const port = new FakePagePort("pedelec-sdk-2", sender);
      context.gateway.accept(port);
      expect(port.disconnectedByExtension).toBe(true);
    });
  });

  describe("with the native host", () => {
    function linkTo(host: FakeNativeHost) {
      let ids = 0;
      const warnings: string[] = [];
      const link = new NativeLink({
        connect: host.connect,
        createRequestId: () => `native-${++ids}`,
        logger: { warn: (code) => warnings.push(code) },
      });
      return { link, warnings };
    }

    it("drops a host whose first host-status states a newer major: the waiting request fails with the mismatch", async () => {
      const host = new FakeNativeHost();
      const { link, warnings } = linkTo(host);
      const lost: unknown[] = [];
      link.onLinkLost((error) => lost.push(error));
      const result = link.request("endSession", APP, { sessionId: "session-aaaa" });
      host.current.emit({ kind: "host-status", version: "2.0.0", protocolVersion: "2.0", core: "connected" });
      await expect(result).rejects.toMatchObject({
        code: "PROTOCOL_VERSION_MISMATCH",
        details: { part: "extension", expected: "2.0", actual: PROTOCOL_VERSION },
      });
      expect(link.state).toBe("closed");
      expect(link.status).toMatchObject({ state: "disconnected", error: { code: "PROTOCOL_VERSION_MISMATCH" } });
      expect(lost).toHaveLength(1);
      expect(warnings).toContain("PROTOCOL_VERSION_MISMATCH");
    });

    it("names the native host when its major is older", async () => {
      const host = new FakeNativeHost();
      const { link } = linkTo(host);
      const result = link.request("endSession", APP, { sessionId: "session-aaaa" });
      host.current.emit({ kind: "host-status", version: "0.0.9", protocolVersion: "0.9", core: "connecting" });
      await expect(result).rejects.toMatchObject({
        code: "PROTOCOL_VERSION_MISMATCH",
        details: { part: "native-host", expected: PROTOCOL_VERSION, actual: "0.9" },
      });
    });

    it("keeps a host of the same major, or one that states no version", async () => {
      for (const stated of [{ protocolVersion: "1.3" }, {}]) {
        const host = new FakeNativeHost();
        const { link } = linkTo(host);
        const result = link.request("endSession", APP, { sessionId: "session-aaaa" });
        host.current.emit({ kind: "host-status", version: "0.1.0", core: "connected", ...stated });
        host.current.respond(host.current.sent[0]!, { ended: true });
        await expect(result).resolves.toEqual({ ended: true });
        expect(link.state).toBe("open");
      }
    });
  });
});
