import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { ProviderAdapter } from "../providers/provider-adapter.js";
import type { SessionSetup } from "../session.js";
import { issueThreadCapability } from "../thread-capability.js";
import { ToolRegistry } from "../tool-registry.js";

/**
 * For tests of Session itself: a complete setup around `adapter` (usually a scripted one), with no processes and no
 * files, whose events go to `published`.
 */
export function scriptedSessionSetup(adapter: ProviderAdapter, published: SessionEventEnvelope[], guidance = ""): SessionSetup {
  return {
    id: "session-0001",
    origin: "http://127.0.0.1:4000",
    provider: "claude",
    adapter,
    executablePath: "/bin/true",
    effortLevel: "medium",
    effort: null,
    effortArgv: [],
    model: null,
    guidance,
    tools: new ToolRegistry([]),
    workspace: { path: "/tmp", managed: false },
    access: "sandbox",
    autoEndOnDisconnect: true,
    capability: issueThreadCapability(),
    binDir: "/tmp",
    loginShellPath: async () => [],
    home: "/tmp",
    baseEnv: {},
    providerIdleTimeoutMs: 60_000,
    modelResponseTimeoutMs: 60_000,
    unfollowedTurnGraceMs: 60_000,
    processLedger: { record: async () => undefined, forget: async () => undefined } as unknown as SessionSetup["processLedger"],
    scriptRunner: () => Promise.reject(new PedelecError("DENO_UNAVAILABLE", "scripted sessions run no scripts")),
    minFreeDiskBytes: async () => 0,
    publish: (envelope) => published.push(envelope),
  };
}
