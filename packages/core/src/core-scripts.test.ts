import { randomUUID } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { CoreRequestFrame, CoreServerFrame } from "@pedelec/protocol/core-wire";
import type { AttestationClaims } from "@pedelec/protocol/full-access";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { newNonce, readAttestationKey, requestDigest, signClaims } from "@pedelec/core-client/full-access-attestation";
import { capabilityOfHangingAgent } from "./testing/agent-capability.js";
import { useCoreUnderTest } from "./testing/core-home.js";
import { collectSessionEvents } from "./testing/session-events.js";
import { processAlive } from "./testing/process-group.js";

const standInDir = resolve(fileURLToPath(new URL("../../../test/stand-ins/claude", import.meta.url)));
const ORIGIN = "http://127.0.0.1:4000";
const core = useCoreUnderTest({ prefix: "pedelec-core-scripts-", providerPath: standInDir, stateFolders: { CLAUDE_CONFIG_DIR: "claude-state" } });

interface Attesting {
  /** Overrides of the claims the native host would sign. */
  claims?: Partial<AttestationClaims>;
  /** Sign with this key instead of Core's. */
  key?: Buffer;
}

/** Sends one request as the native host forwards it; with `attest`, signed the way the host signs a Full Access claim. */
async function hostRequest(connection: CoreConnection, type: string, payload: unknown, attest?: Attesting): Promise<unknown> {
  const frame: CoreRequestFrame = { kind: "request", id: randomUUID(), type, origin: ORIGIN, payload };
  if (attest) {
    const now = Date.now();
    const claims: AttestationClaims = {
      version: 1,
      origin: ORIGIN,
      extensionOrigin: "chrome-extension://jipdjobnmfeagcdooiopbbkmbpgbkdhe/",
      instanceId: "instance-abcdefghijklmnop",
      approvalGrantedAt: now - 60_000,
      fullAccessGrantId: "grant-abcdefghijklmnopq",
      fullAccessGrantedAt: now - 30_000,
      requestDigest: requestDigest({ type, origin: ORIGIN, payload }),
      nonce: newNonce(),
      issuedAt: now,
      expiresAt: now + 30_000,
      ...attest.claims,
    };
    frame.attestation = signClaims(attest.key ?? readAttestationKey(join(core.home, "keys")), claims);
  }
  return new Promise((resolvePromise, reject) => {
    const stop = connection.onFrame((answer: CoreServerFrame) => {
      if (answer.kind !== "response" || answer.id !== frame.id) return;
      stop();
      if (answer.ok) resolvePromise(answer.result);
      else reject(PedelecError.fromWire(answer.error));
    });
    connection.sendFrame(frame);
  });
}

async function sessionWithWorkspace(page: CoreConnection, extra: Record<string, unknown> = {}, attest?: Attesting) {
  const info = (await hostRequest(page, "createSession", { provider: "claude", ...extra }, attest)) as {
    sessionId: string;
    workspace: { path: string };
    access: string;
  };
  return info;
}

describe("scripts through Core", () => {
  it("runs a page's script in the sandbox and answers with its result, a non-zero exit included", async () => {
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const { sessionId, workspace } = await sessionWithWorkspace(page);
    await writeFile(
      join(workspace.path, "hello.ts"),
      'import { threadId } from "pedelec:workspace";\nconsole.log("hi", threadId, Deno.args.join(","));\nDeno.exit(3);\n',
    );
    const result = await hostRequest(page, "runWorkspaceScript", { sessionId, runId: "run-1", entry: "hello.ts", args: ["a", "b"] });
    expect(result).toMatchObject({ exitCode: 3, stdout: `hi ${sessionId} a,b\n`, termination: "exited", access: "sandbox", timedOut: false });
    expect((result as { walls: string[] }).walls).toContain("bubblewrap");

    // Another origin cannot reach the session at all.
    const other = {
      kind: "request" as const,
      id: "other",
      type: "runWorkspaceScript",
      origin: "https://other.example",
      payload: { sessionId, runId: "run-2", entry: "hello.ts" },
    };
    const refusal = new Promise((resolvePromise) =>
      page.onFrame((frame) => frame.kind === "response" && frame.id === "other" && resolvePromise(frame)),
    );
    page.sendFrame(other);
    expect(await refusal).toMatchObject({ ok: false, error: { code: "THREAD_NOT_FOUND" } });
    page.close();
  });

  it("streams an agent's run to pedelec-ts-runtime's connection as it happens, and stops it when the turn is cancelled", async () => {
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const { sessionId, workspace } = await sessionWithWorkspace(page);
    await hostRequest(page, "sendText", { sessionId, turnId: "turn-1", text: "hang" });
    const capability = await capabilityOfHangingAgent(workspace.path);
    await writeFile(join(workspace.path, "ticks.ts"), 'console.log("first");\nawait new Promise((r) => setTimeout(r, 60_000));\n');

    const agent = await CoreConnection.open(running.paths.socketPath);
    const output: string[] = [];
    let sawFirst: () => void = () => undefined;
    const firstLine = new Promise<void>((resolvePromise) => (sawFirst = resolvePromise));
    agent.onFrame((frame) => {
      if (frame.kind !== "run-output") return;
      output.push(Buffer.from(frame.data, "base64").toString("utf8"));
      if (output.join("").includes("first")) sawFirst();
    });
    const run = agent.request("runScript", { threadId: sessionId, capability, entry: "ticks.ts" });
    await firstLine;
    await hostRequest(page, "cancelTurn", { sessionId });
    await expect(run).resolves.toMatchObject({ termination: "cancelled" });
    expect(output.join("")).toBe("first\n");

    // A wrong capability reaches nothing.
    await expect(agent.request("runScript", { threadId: sessionId, capability: "x".repeat(43), entry: "ticks.ts" })).rejects.toMatchObject({
      code: "THREAD_ACCESS_DENIED",
    });
    agent.close();
    page.close();
  });

  it("cancels a page's run on request, and on session end; an ended session runs nothing more", async () => {
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const { sessionId, workspace } = await sessionWithWorkspace(page);
    await writeFile(join(workspace.path, "wait.ts"), "await new Promise((r) => setTimeout(r, 60_000));\n");
    const cancelled = hostRequest(page, "runWorkspaceScript", { sessionId, runId: "to-cancel", entry: "wait.ts" });
    await expect
      .poll(() => hostRequest(page, "cancelWorkspaceRun", { sessionId, runId: "to-cancel" }), { timeout: 10_000 })
      .toEqual({ cancelled: true });
    await expect(cancelled).rejects.toMatchObject({ code: "DENO_CANCELLED", message: "the page cancelled the run" });

    const ended = hostRequest(page, "runWorkspaceScript", { sessionId, runId: "to-end", entry: "wait.ts" });
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 300));
    await hostRequest(page, "endSession", { sessionId });
    await expect(ended).rejects.toMatchObject({ code: "DENO_CANCELLED", message: expect.stringContaining("ended") });
    await expect(hostRequest(page, "runWorkspaceScript", { sessionId, runId: "late", entry: "wait.ts" })).rejects.toMatchObject({
      code: "SESSION_ENDED",
    });
    page.close();
  });

  it("gives Full Access only to an attested request: refused without, forged, expired or replayed", async () => {
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const { sessionId, workspace } = await sessionWithWorkspace(page);
    await writeFile(join(workspace.path, "env.ts"), 'console.log(Deno.env.get("PEDELEC_HOME"));\n');
    const payload = { sessionId, runId: "full-1", entry: "env.ts", access: "full" };

    await expect(hostRequest(page, "runWorkspaceScript", payload)).rejects.toMatchObject({ code: "FULL_ACCESS_NOT_GRANTED" });
    await expect(hostRequest(page, "runWorkspaceScript", payload, { key: Buffer.alloc(32, 7) })).rejects.toMatchObject({
      code: "FULL_ACCESS_ATTESTATION_INVALID",
    });
    await expect(
      hostRequest(page, "runWorkspaceScript", payload, { claims: { issuedAt: Date.now() - 60_000, expiresAt: Date.now() - 30_000 } }),
    ).rejects.toMatchObject({
      code: "FULL_ACCESS_ATTESTATION_EXPIRED",
    });
    const result = await hostRequest(page, "runWorkspaceScript", payload, {});
    // The host environment is kept: the script sees Core's own PEDELEC_HOME.
    expect(result).toMatchObject({ exitCode: 0, stdout: `${core.home}\n`, access: "full", walls: [] });

    const replayedClaims = { nonce: "replayed-nonce-abcdefghijklmnop" };
    await hostRequest(page, "runWorkspaceScript", { ...payload, runId: "full-2" }, { claims: replayedClaims });
    await expect(hostRequest(page, "runWorkspaceScript", { ...payload, runId: "full-2" }, { claims: replayedClaims })).rejects.toMatchObject({
      code: "FULL_ACCESS_ATTESTATION_REPLAYED",
    });
    // A session cannot be made Full Access by its flag either.
    await expect(sessionWithWorkspace(page, { access: "full" })).rejects.toMatchObject({ code: "FULL_ACCESS_NOT_GRANTED" });
    page.close();
  });

  it("comes up with a damaged Full Access key: sandbox runs work, Full Access is refused with the key's file named", async () => {
    await mkdir(join(core.home, "keys"), { recursive: true, mode: 0o700 });
    await writeFile(join(core.home, "keys", "full-access.key"), "0123", { mode: 0o600 });
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const { sessionId, workspace } = await sessionWithWorkspace(page);
    await writeFile(join(workspace.path, "ok.ts"), 'console.log("sandboxed");\n');
    await expect(hostRequest(page, "runWorkspaceScript", { sessionId, runId: "sandboxed", entry: "ok.ts" })).resolves.toMatchObject({
      exitCode: 0,
      stdout: "sandboxed\n",
    });
    const someKey = Buffer.alloc(32, 7);
    await expect(
      hostRequest(page, "runWorkspaceScript", { sessionId, runId: "full", entry: "ok.ts", access: "full" }, { key: someKey }),
    ).rejects.toMatchObject({
      code: "FULL_ACCESS_ATTESTATION_INVALID",
      message: expect.stringMatching(/Full Access is off \(.*full-access\.key\).*damaged/),
    });
    await expect(sessionWithWorkspace(page, { access: "full" }, { key: someKey })).rejects.toMatchObject({ code: "FULL_ACCESS_ATTESTATION_INVALID" });
    page.close();
  });

  it("stops the origin's Full Access at once on revocation: its runs die, its Full Access sessions end, old grants are refused", async () => {
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const events = collectSessionEvents(page);
    const sandboxed = await sessionWithWorkspace(page);
    const full = await sessionWithWorkspace(page, { access: "full" }, {});
    expect(full.access).toBe("full");
    await writeFile(join(sandboxed.workspace.path, "wait.ts"), "await new Promise((r) => setTimeout(r, 60_000));\n");
    const fullRun = hostRequest(
      page,
      "runWorkspaceScript",
      { sessionId: sandboxed.sessionId, runId: "full-wait", entry: "wait.ts", access: "full" },
      {},
    );
    const sandboxRun = hostRequest(page, "runWorkspaceScript", {
      sessionId: sandboxed.sessionId,
      runId: "sandbox-run",
      entry: "wait.ts",
      timeoutMs: 3_000,
    });
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 500));

    const revokedAt = Date.now();
    await expect(hostRequest(page, "revokeFullAccess", { revokedAt })).resolves.toEqual({ stoppedRuns: 1, endedSessions: 1 });
    await expect(fullRun).rejects.toMatchObject({ code: "DENO_CANCELLED", message: expect.stringContaining("revoked") });
    await events.until("session-ended", (event) => event.reason === "full-access-revoked");
    // The sandboxed run of the same origin goes on to its own end.
    await expect(sandboxRun).resolves.toMatchObject({ termination: "timeout", timedOut: true });
    // A grant from before the revocation is dead; a new grant works.
    const again = { sessionId: sandboxed.sessionId, runId: "after", entry: "wait.ts", access: "full", timeoutMs: 200 };
    await expect(hostRequest(page, "runWorkspaceScript", again, { claims: { fullAccessGrantedAt: revokedAt - 1 } })).rejects.toMatchObject({
      code: "FULL_ACCESS_NOT_GRANTED",
    });
    await expect(
      hostRequest(page, "runWorkspaceScript", again, { claims: { fullAccessGrantedAt: revokedAt + 1, issuedAt: revokedAt + 2 } }),
    ).resolves.toMatchObject({
      termination: "timeout",
    });
    page.close();
  });

  it("runs a Full Access thread's agent scripts without the sandbox, entry rules and timeout still applying", async () => {
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const { sessionId, workspace, access } = await sessionWithWorkspace(page, { access: "full" }, {});
    expect(access).toBe("full");
    await hostRequest(page, "sendText", { sessionId, turnId: "turn-1", text: "hang" });
    const capability = await capabilityOfHangingAgent(workspace.path);
    await writeFile(
      join(workspace.path, "host.ts"),
      'console.log(Deno.env.get("PEDELEC_HOME"), new TextDecoder().decode(new Deno.Command("true").outputSync().stdout) === "");\n',
    );
    const agent = await CoreConnection.open(running.paths.socketPath);
    const output: Buffer[] = [];
    agent.onFrame((frame) => frame.kind === "run-output" && output.push(Buffer.from(frame.data, "base64")));
    await expect(agent.request("runScript", { threadId: sessionId, capability, entry: "host.ts" })).resolves.toMatchObject({
      exitCode: 0,
      access: "full",
      walls: [],
    });
    expect(Buffer.concat(output).toString("utf8")).toBe(`${core.home} true\n`);
    await expect(agent.request("runScript", { threadId: sessionId, capability, entry: "/etc/passwd" })).rejects.toMatchObject({
      code: "DENO_ENTRY_INVALID",
    });
    await writeFile(join(workspace.path, "spin.ts"), "for (;;) {}\n");
    await expect(agent.request("runScript", { threadId: sessionId, capability, entry: "spin.ts", timeoutMs: 300 })).resolves.toMatchObject({
      termination: "timeout",
      timedOut: true,
    });
    agent.close();
    page.close();
  });

  it("kills every run, Full Access ones included, when Core shuts down", async () => {
    const running = await core.start();
    const page = await CoreConnection.open(running.paths.socketPath);
    const { sessionId, workspace } = await sessionWithWorkspace(page);
    const source = (name: string) => `Deno.writeTextFileSync("${name}.pid", String(Deno.pid));\nawait new Promise((r) => setTimeout(r, 60_000));\n`;
    const full = hostRequest(page, "runWorkspaceScript", { sessionId, runId: "full", source: source("full"), access: "full" }, {}).catch(
      (error: unknown) => error,
    );
    const pidFile = join(workspace.path, "full.pid");
    await expect.poll(() => readFile(pidFile, "utf8").catch(() => ""), { timeout: 10_000 }).not.toBe("");
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(processAlive(pid)).toBe(true);
    await running.stop();
    expect(processAlive(pid)).toBe(false);
    expect(await full).toBeInstanceOf(Error);
  });
});
