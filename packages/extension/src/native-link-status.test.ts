import { describe, expect, it } from "vitest";
import { desktopLinkStatusSchema } from "./internal-messages.js";
import { NativeLink } from "./native-link.js";
import { FakeNativeHost } from "./testing/fakes.js";

function setup() {
  const host = new FakeNativeHost();
  const link = new NativeLink({ connect: host.connect, logger: { warn: () => undefined } });
  /** The status as the popup gets it: through the schema its answer is checked against. */
  const status = () => desktopLinkStatusSchema.parse(link.status);
  return { host, link, status };
}

const endSession = (link: NativeLink) =>
  link.request("endSession", "https://app.example", { sessionId: "session-aaaa" }).catch((error: unknown) => error);

describe("NativeLink.status", () => {
  it("is not-connected before anything used the link, and connecting until the host says Core answers", async () => {
    const { host, link, status } = setup();
    expect(status()).toEqual({ state: "not-connected" });
    const pending = endSession(link);
    expect(status()).toEqual({ state: "connecting" });
    host.current.hello("connecting");
    expect(status()).toEqual({ state: "connecting", version: "0.1.0" });
    host.current.hello("connected", true);
    expect(status()).toEqual({ state: "connected", version: "0.1.0" });
    host.current.respond(host.current.sent[0]!, { ended: true });
    await pending;
  });

  it("reports a missing native host with Chrome's reason until a new connection is tried", async () => {
    const { host, link, status } = setup();
    const failed = endSession(link);
    host.current.die("Specified native messaging host not found.");
    await expect(failed).resolves.toMatchObject({ code: "NATIVE_HOST_UNAVAILABLE" });
    expect(status()).toEqual({
      state: "host-missing",
      error: {
        code: "NATIVE_HOST_UNAVAILABLE",
        message: "the Pedelec native host is unavailable: Specified native messaging host not found.",
        details: { lastError: "Specified native messaging host not found." },
      },
    });
    // The next request tries again: the old failure is no longer the news.
    void endSession(link);
    expect(status()).toEqual({ state: "connecting" });
  });

  it("reports a connect that throws as a missing host", async () => {
    const link = new NativeLink({
      connect: () => {
        throw new Error("Access to the specified native messaging host is forbidden.");
      },
      logger: { warn: () => undefined },
    });
    await expect(endSession(link)).resolves.toMatchObject({ code: "NATIVE_HOST_UNAVAILABLE" });
    expect(link.status).toMatchObject({
      state: "host-missing",
      error: { details: { lastError: "Access to the specified native messaging host is forbidden." } },
    });
  });

  it("reports a probe whose connect throws as a missing host", async () => {
    const link = new NativeLink({
      connect: () => {
        throw new Error("Specified native messaging host not found.");
      },
      logger: { warn: () => undefined },
    });
    await link.probe(1_000);
    expect(link.status).toMatchObject({ state: "host-missing", error: { code: "NATIVE_HOST_UNAVAILABLE" } });
  });

  it("reports Core unavailable with the host's reason, and connected again once the host reaches a Core", () => {
    const { host, link, status } = setup();
    void endSession(link);
    host.current.hello("connected");
    host.current.emit({
      kind: "host-status",
      version: "0.1.0",
      core: "unavailable",
      coreLaunched: false,
      error: { code: "CORE_RUNTIME_UNAVAILABLE", message: "Pedelec Core did not start within 10 s; see ~/.pedelec/logs/core.log" },
    });
    expect(status()).toEqual({
      state: "core-unavailable",
      version: "0.1.0",
      error: { code: "CORE_RUNTIME_UNAVAILABLE", message: "Pedelec Core did not start within 10 s; see ~/.pedelec/logs/core.log" },
    });
    host.current.hello("connected", true);
    expect(status()).toEqual({ state: "connected", version: "0.1.0" });
  });

  it("reports a host that went away after it spoke as disconnected, and not-connected after closing on purpose", async () => {
    const { host, link, status } = setup();
    const lost = endSession(link);
    host.current.hello("connected");
    host.current.die("Native host has exited.");
    await expect(lost).resolves.toMatchObject({ code: "NATIVE_CONNECTION_CLOSED" });
    expect(status()).toMatchObject({
      state: "disconnected",
      error: { code: "NATIVE_CONNECTION_CLOSED", details: { lastError: "Native host has exited." } },
    });

    const again = endSession(link);
    host.current.hello("connected");
    expect(status()).toEqual({ state: "connected", version: "0.1.0" });
    link.close();
    await again;
    expect(status()).toEqual({ state: "not-connected" });
  });
});
