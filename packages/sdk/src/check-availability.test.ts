import { afterEach, describe, expect, it, vi } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { Pedelec } from "./pedelec.js";
import { FakeExtension, TEST_ORIGIN } from "./testing/fake-extension.js";

const SETTINGS = { defaultProvider: "claude", defaultEffortLevel: "medium", defaultModels: {} };

interface LinkStatus {
  approved: boolean;
  appConnected: boolean;
  appLaunched?: boolean;
}

/** An extension whose status is `before` until the page's first request that reaches Core, and `after` from then on. */
function extensionWith(before: LinkStatus, after: LinkStatus = before): FakeExtension {
  const extension = new FakeExtension().install();
  let reachedCore = false;
  extension.handle("getApprovalStatus", () => ({ installed: true, origin: TEST_ORIGIN, appLaunched: false, ...(reachedCore ? after : before) }));
  extension.handle("getSettings", () => {
    reachedCore = true;
    return SETTINGS;
  });
  return extension;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("pedelec.checkAvailability()", () => {
  it("reports a missing extension, outside a page too", async () => {
    const outside = await new Pedelec().checkAvailability();
    expect(outside).toMatchObject({
      available: false,
      extension: { available: false },
      approval: { approved: false, origin: "" },
      desktop: { available: false, launchAttempted: false },
    });
    expect(outside.error?.code).toBe("EXTENSION_UNAVAILABLE");
    const extension = new FakeExtension().install();
    extension.absent = true;
    const absent = await new Pedelec().checkAvailability();
    expect(absent).toMatchObject({ available: false, extension: { available: false }, approval: { origin: TEST_ORIGIN } });
    expect(absent.error).toBeInstanceOf(PedelecError);
    expect(absent.error?.code).toBe("EXTENSION_UNAVAILABLE");
  });

  it("reports an origin the user has not approved without asking Core or the user", async () => {
    const extension = extensionWith({ approved: false, appConnected: true });
    const availability = await new Pedelec().checkAvailability();
    expect(availability).toMatchObject({
      available: false,
      extension: { available: true },
      approval: { approved: false, origin: TEST_ORIGIN },
      desktop: { available: true, launchAttempted: false },
    });
    expect(availability.error?.code).toBe("CREATE_SESSION_NOT_APPROVED");
    expect(extension.requests.map((request) => request.type)).toEqual(["getApprovalStatus"]);
  });

  it("is available when the approved origin's request reaches a running desktop", async () => {
    const extension = extensionWith({ approved: true, appConnected: true });
    await expect(new Pedelec().checkAvailability()).resolves.toEqual({
      available: true,
      extension: { available: true },
      approval: { approved: true, origin: TEST_ORIGIN },
      desktop: { available: true, launchAttempted: false },
    });
    expect(extension.requests.map((request) => request.type)).toEqual(["getApprovalStatus", "getSettings"]);
  });

  it("says the desktop had to be started when the native host reports it started it", async () => {
    const extension = extensionWith({ approved: true, appConnected: false }, { approved: true, appConnected: true, appLaunched: true });
    await expect(new Pedelec().checkAvailability()).resolves.toMatchObject({
      available: true,
      desktop: { available: true, launchAttempted: true },
    });
    expect(extension.requests.map((request) => request.type)).toEqual(["getApprovalStatus", "getSettings", "getApprovalStatus"]);
  });

  it("says no launch was needed when the native host found the desktop running", async () => {
    extensionWith({ approved: true, appConnected: false }, { approved: true, appConnected: true, appLaunched: false });
    await expect(new Pedelec().checkAvailability()).resolves.toMatchObject({ desktop: { available: true, launchAttempted: false } });
  });

  it("takes the launch from the status when the status check itself brought the desktop up", async () => {
    extensionWith({ approved: true, appConnected: true, appLaunched: true });
    await expect(new Pedelec().checkAvailability()).resolves.toMatchObject({ desktop: { available: true, launchAttempted: true } });
  });

  it("reports a desktop that did not start, with Core's error", async () => {
    const extension = extensionWith({ approved: true, appConnected: false });
    extension.handle("getSettings", () => {
      extension.handle("getApprovalStatus", () => ({ installed: true, origin: TEST_ORIGIN, approved: true, appConnected: false, appLaunched: true }));
      throw new PedelecError("CORE_RUNTIME_UNAVAILABLE", "Pedelec Core did not start within 10000 ms");
    });
    const availability = await new Pedelec().checkAvailability();
    expect(availability).toMatchObject({
      available: false,
      extension: { available: true },
      approval: { approved: true },
      desktop: { available: false, launchAttempted: true },
    });
    expect(availability.error?.code).toBe("CORE_RUNTIME_UNAVAILABLE");
    expect(extension.requestsOf("createSession")).toEqual([]);
  });

  it("attempts no launch when the native host itself is missing", async () => {
    const extension = extensionWith({ approved: true, appConnected: false });
    extension.handle("getSettings", () => {
      throw new PedelecError("NATIVE_HOST_UNAVAILABLE", "Specified native messaging host not found.");
    });
    const availability = await new Pedelec().checkAvailability();
    expect(availability.desktop).toEqual({ available: false, launchAttempted: false });
    expect(availability.error?.code).toBe("NATIVE_HOST_UNAVAILABLE");
  });

  it("reports an extension that answers the status check wrongly as unavailable, without rejecting", async () => {
    const extension = new FakeExtension().install();
    extension.handle("getApprovalStatus", () => ({ installed: false }));
    const availability = await new Pedelec().checkAvailability();
    expect(availability).toMatchObject({ available: false, extension: { available: false } });
    expect(availability.error?.code).toBe("SDK_PROTOCOL_ERROR");
  });
});
