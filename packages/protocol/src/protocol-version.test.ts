import { describe, expect, it } from "vitest";
import { remedyFor, PROTOCOL_UPDATE_REMEDIES } from "./error-remedies.js";
import { sdkPortProtocolVersion, SDK_PORT_NAME } from "./page-wire.js";
import { protocolVersionMismatch } from "./protocol-mismatch.js";
import { areCompatibleProtocolVersions, PROTOCOL_PARTS, PROTOCOL_VERSION, UNSTATED_PROTOCOL_VERSION } from "./protocol-version.js";

describe("the protocol version rule", () => {
  it("lets equal majors talk, whatever their minors", () => {
    expect(areCompatibleProtocolVersions("1.0", "1.0")).toBe(true);
    expect(areCompatibleProtocolVersions("1.0", "1.12")).toBe(true);
    expect(areCompatibleProtocolVersions("1.0", "2.0")).toBe(false);
    expect(areCompatibleProtocolVersions("0.9", "1.0")).toBe(false);
  });

  it("takes nothing that is not major.minor as compatible", () => {
    for (const version of ["", "1", "1.0.0", "01.0", "1.x", " 1.0", "v1.0"]) {
      expect(areCompatibleProtocolVersions(PROTOCOL_VERSION, version), version).toBe(false);
    }
  });

  it("treats a part that states nothing as speaking this major", () => {
    expect(areCompatibleProtocolVersions(PROTOCOL_VERSION, UNSTATED_PROTOCOL_VERSION)).toBe(true);
  });
});

describe("PROTOCOL_VERSION_MISMATCH", () => {
  it("is undefined for peers that can talk", () => {
    expect(protocolVersionMismatch({ part: "extension", version: "1.0" }, { part: "sdk", version: "1.5" })).toBeUndefined();
  });

  it("names the older part, the version it needs and the one it has", () => {
    const newerPage = protocolVersionMismatch({ part: "extension", version: "1.0" }, { part: "sdk", version: "2.0" });
    expect(newerPage).toMatchObject({ code: "PROTOCOL_VERSION_MISMATCH", details: { part: "extension", expected: "2.0", actual: "1.0" } });
    const olderPage = protocolVersionMismatch({ part: "extension", version: "1.0" }, { part: "sdk", version: "0.3" });
    expect(olderPage?.details).toEqual({ part: "sdk", expected: "1.0", actual: "0.3" });
    const unreadable = protocolVersionMismatch({ part: "core", version: "1.0" }, { part: "native-host", version: "banana" });
    expect(unreadable?.details).toEqual({ part: "native-host", expected: "1.0", actual: "banana" });
    expect(olderPage?.message).toMatch(/update the page's Pedelec SDK$/);
  });

  it("has a remedy for each part to update, and the code's own otherwise", () => {
    for (const part of PROTOCOL_PARTS) {
      const error = protocolVersionMismatch({ part, version: "0.1" }, { part: part === "core" ? "native-host" : "core", version: "1.0" });
      expect(error?.remedy, part).toBe(PROTOCOL_UPDATE_REMEDIES[part]);
    }
    expect(remedyFor("PROTOCOL_VERSION_MISMATCH", { part: "browser" })).toContain("`details.part`");
  });
});

describe("the SDK port name", () => {
  it("states this build's version, and reads a bare name as one from before the handshake", () => {
    expect(SDK_PORT_NAME).toBe(`pedelec-sdk@${PROTOCOL_VERSION}`);
    expect(sdkPortProtocolVersion(SDK_PORT_NAME)).toBe(PROTOCOL_VERSION);
    expect(sdkPortProtocolVersion("pedelec-sdk")).toBe(UNSTATED_PROTOCOL_VERSION);
    expect(sdkPortProtocolVersion("pedelec-sdk@2.0")).toBe("2.0");
    expect(sdkPortProtocolVersion("pedelec-sdk-2")).toBeUndefined();
    expect(sdkPortProtocolVersion("other")).toBeUndefined();
    expect(sdkPortProtocolVersion(`pedelec-sdk@${"9".repeat(40)}`)).toBeUndefined();
  });
});
