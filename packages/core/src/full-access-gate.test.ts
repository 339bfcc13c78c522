import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CoreRequestFrame } from "@pedelec/protocol/core-wire";
import type { AttestationClaims } from "@pedelec/protocol/full-access";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { ATTESTATION_KEY_FILE, newNonce, readAttestationKey, requestDigest, signClaims } from "@pedelec/core-client/full-access-attestation";
import { ensureAttestationKey } from "./attestation-key.js";
import { FullAccessGate } from "./full-access-gate.js";

const ORIGIN = "http://127.0.0.1:4000";
const NOW = 1_800_000_000_000;
const key = randomBytes(32);

function request(payload: unknown = { access: "full", provider: "claude" }): Omit<CoreRequestFrame, "attestation"> & { origin: string } {
  return { kind: "request", id: "request-1", type: "createSession", origin: ORIGIN, payload };
}

function claimsFor(frame: { type: string; origin: string; payload: unknown }, overrides: Partial<AttestationClaims> = {}): AttestationClaims {
  return {
    version: 1,
    origin: frame.origin,
    extensionOrigin: "chrome-extension://jipdjobnmfeagcdooiopbbkmbpgbkdhe/",
    instanceId: "instance-abcdefghijklmnop",
    approvalGrantedAt: NOW - 60_000,
    fullAccessGrantId: "grant-abcdefghijklmnopq",
    fullAccessGrantedAt: NOW - 30_000,
    requestDigest: requestDigest(frame),
    nonce: newNonce(),
    issuedAt: NOW,
    expiresAt: NOW + 30_000,
    ...overrides,
  };
}

function attested(frame = request(), overrides: Partial<AttestationClaims> = {}, signingKey = key): CoreRequestFrame {
  return { ...frame, attestation: signClaims(signingKey, claimsFor(frame, overrides)) };
}

function admit(gate: FullAccessGate, frame: CoreRequestFrame) {
  return () => gate.admit(frame, frame.payload);
}

describe("FullAccessGate", () => {
  it("admits a request the native host attested with Core's key", () => {
    const gate = new FullAccessGate(key, () => NOW);
    expect(gate.admit(attested(), request().payload).origin).toBe(ORIGIN);
  });

  it("admits the same request whatever order its keys arrive in (the digest is over canonical JSON)", () => {
    const gate = new FullAccessGate(key, () => NOW);
    const signed = attested(request({ access: "full", provider: "claude" }));
    expect(() => gate.admit({ ...signed, payload: { provider: "claude", access: "full" } }, { provider: "claude", access: "full" })).not.toThrow();
  });

  it("refuses a request with no attestation, whatever the page's flag says", () => {
    const gate = new FullAccessGate(key, () => NOW);
    expect(admit(gate, request())).toThrow(expect.objectContaining({ code: "FULL_ACCESS_NOT_GRANTED" }));
  });

  it("refuses an attestation signed with another key (forged)", () => {
    const gate = new FullAccessGate(key, () => NOW);
    expect(admit(gate, attested(request(), {}, randomBytes(32)))).toThrow(expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID" }));
  });

  it("refuses claims changed after signing (tampered)", () => {
    const gate = new FullAccessGate(key, () => NOW);
    const signed = attested();
    const tampered = JSON.stringify({ ...JSON.parse(signed.attestation!.claims), expiresAt: NOW + 3_600_000 });
    expect(admit(gate, { ...signed, attestation: { claims: tampered, signature: signed.attestation!.signature } })).toThrow(
      expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID" }),
    );
  });

  it("refuses an attestation made for another request or another origin", () => {
    const gate = new FullAccessGate(key, () => NOW);
    const signed = attested();
    expect(admit(gate, { ...signed, payload: { access: "full", provider: "codex" } })).toThrow(
      expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID", message: expect.stringContaining("different request") }),
    );
    expect(admit(gate, { ...signed, origin: "https://evil.example" })).toThrow(
      expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID", message: expect.stringContaining("not https://evil.example") }),
    );
    expect(admit(gate, { ...signed, type: "runWorkspaceScript" })).toThrow(expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID" }));
  });

  it("refuses an expired attestation", () => {
    const gate = new FullAccessGate(key, () => NOW + 30_001);
    expect(admit(gate, attested())).toThrow(expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_EXPIRED" }));
  });

  it("refuses an attestation issued in the future or with an expiry before its issue", () => {
    const gate = new FullAccessGate(key, () => NOW);
    expect(admit(gate, attested(request(), { issuedAt: NOW + 60_000, expiresAt: NOW + 90_000 }))).toThrow(
      expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID" }),
    );
    expect(admit(gate, attested(request(), { expiresAt: NOW - 1 }))).toThrow(expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID" }));
  });

  it("admits an attestation once: the same nonce again is a replay", () => {
    const gate = new FullAccessGate(key, () => NOW);
    const signed = attested();
    gate.admit(signed, signed.payload);
    expect(admit(gate, signed)).toThrow(expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_REPLAYED" }));
  });

  it("refuses grants from before a revocation and admits a grant made after it", () => {
    const gate = new FullAccessGate(key, () => NOW);
    gate.revoke(ORIGIN, NOW - 10_000);
    expect(admit(gate, attested())).toThrow(
      expect.objectContaining({ code: "FULL_ACCESS_NOT_GRANTED", message: expect.stringContaining("revoked") }),
    );
    expect(() => gate.admit(attested(request(), { fullAccessGrantedAt: NOW - 5_000 }), request().payload)).not.toThrow();
    // Another origin's revocation changes nothing here.
    gate.revoke("https://other.example", NOW);
    expect(() => gate.admit(attested(request(), { fullAccessGrantedAt: NOW - 5_000 }), request().payload)).not.toThrow();
  });

  it("refuses a Full Access grant older than the approval it needs, and malformed claims", () => {
    const gate = new FullAccessGate(key, () => NOW);
    expect(admit(gate, attested(request(), { approvalGrantedAt: NOW - 1_000, fullAccessGrantedAt: NOW - 2_000 }))).toThrow(
      expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID" }),
    );
    const frame = request();
    const claims = JSON.stringify({ ...claimsFor(frame), version: 2 });
    expect(admit(gate, { ...frame, attestation: signClaims(key, JSON.parse(claims) as AttestationClaims) })).toThrow(
      expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID", message: expect.stringContaining("malformed") }),
    );
  });
});

describe("the attestation key", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("is created once with 0600 in a 0700 folder and read back unchanged", async () => {
    dir = await mkdtemp(join(tmpdir(), "pedelec-keys-"));
    const keysDir = join(dir, "keys");
    const first = ensureAttestationKey(keysDir);
    expect(first.usable).toBe(true);
    expect(ensureAttestationKey(keysDir)).toEqual(first);
    expect(readAttestationKey(keysDir)).toEqual(first.usable && first.key);
    expect((await stat(keysDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(keysDir, ATTESTATION_KEY_FILE))).mode & 0o777).toBe(0o600);
    // Written whole and linked into place: no temporary file is left beside it.
    expect(await readdir(keysDir)).toEqual([ATTESTATION_KEY_FILE]);
  });

  it.each([
    ["empty", ""],
    ["short", "abcd"],
  ])("reports an %s key without throwing and leaves it for the user to delete", async (_label, text) => {
    dir = await mkdtemp(join(tmpdir(), "pedelec-keys-"));
    await writeFile(join(dir, ATTESTATION_KEY_FILE), text, { mode: 0o600 });
    const state = ensureAttestationKey(dir);
    expect(state).toMatchObject({
      usable: false,
      error: { code: "FULL_ACCESS_ATTESTATION_INVALID", message: expect.stringContaining(join(dir, ATTESTATION_KEY_FILE)) },
    });
    expect(await readFile(join(dir, ATTESTATION_KEY_FILE), "utf8")).toBe(text);
  });

  it("refuses every Full Access admission while the key is damaged", () => {
    const gate = new FullAccessGate(
      new PedelecError("FULL_ACCESS_ATTESTATION_INVALID", "Full Access is off (keys/full-access.key): damaged"),
      () => NOW,
    );
    expect(() => gate.admit(attested(), request().payload)).toThrow(
      expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID", message: expect.stringContaining("Full Access is off") }),
    );
  });

  it("reports a missing or damaged key as FULL_ACCESS_ATTESTATION_INVALID", async () => {
    const keysDir = await mkdtemp(join(tmpdir(), "pedelec-keys-"));
    dir = keysDir;
    expect(() => readAttestationKey(keysDir)).toThrow(expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID" }));
    await writeFile(join(keysDir, ATTESTATION_KEY_FILE), "not hex");
    expect(() => readAttestationKey(keysDir)).toThrow(
      expect.objectContaining({ code: "FULL_ACCESS_ATTESTATION_INVALID", message: expect.stringContaining("damaged") }),
    );
  });
});
