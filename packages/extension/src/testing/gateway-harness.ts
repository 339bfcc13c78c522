import { vi } from "vitest";
import { SDK_PORT_NAME } from "@pedelec/protocol/page-wire";
import type { ExtensionToHostMessage } from "@pedelec/protocol/native-wire";
import { ApprovalBroker } from "../approval-broker.js";
import { ApprovalStore } from "../approval-store.js";
import { SingleApprovalWindow } from "../approval-window.js";
import type { AutoEndEntry } from "../auto-end-ledger.js";
import { FullAccessGrantStore } from "../full-access-grants.js";
import { FullAccessRevocations } from "../full-access-revocations.js";
import { InstanceIdStore } from "../instance-id.js";
import { NativeLink } from "../native-link.js";
import { PageGateway } from "../page-gateway.js";
import type { PortSender } from "../page-port.js";
import { RevocationStore } from "../revocation-store.js";
import { WorkspaceConsentStore } from "../workspace-consent-store.js";
import { type FakeNativeChannel, FakeNativeHost, FakePagePort, FakeWindows, MemoryStorage, sessionInfo } from "./fakes.js";

// A PageGateway wired to fakes of Chrome's storage, windows, page ports and native host, as the service worker wires
// the real ones.

export const APP = "https://app.example";
export const waitOptions = { timeout: 2000, interval: 2 };

export interface GatewaySetupOptions {
  approved?: string[];
  /** Origins granted Full Access (approved first if they are not in `approved`). */
  granted?: string[];
  approvalTimeoutMs?: number;
  /** Makes opening the approval window fail. */
  windowFailure?: Error;
  /** Folders already consented to, per origin. */
  consented?: Record<string, string[]>;
  statusProbeTimeoutMs?: number;
  /** The clock of every store; 1000 ms past the epoch by default. */
  now?: () => number;
}

export async function setup(options: GatewaySetupOptions = {}) {
  const host = new FakeNativeHost();
  const warnings: { code: string; message: string; details?: unknown }[] = [];
  const logger = { warn: (code: string, message: string, details?: unknown) => void warnings.push({ code, message, details }) };
  const link = new NativeLink({ connect: host.connect, logger });
  const storage = new MemoryStorage();
  const now = options.now ?? (() => 1000);
  const approvedOrigins = new ApprovalStore(storage, { now });
  for (const origin of options.approved ?? []) await approvedOrigins.approve(origin);
  const consents = new WorkspaceConsentStore(storage);
  for (const [origin, paths] of Object.entries(options.consented ?? {})) {
    for (const path of paths) await consents.allow(origin, path);
  }
  let grantIds = 0;
  const grants = new FullAccessGrantStore(storage, approvedOrigins, { now, createGrantId: () => `grant-${++grantIds}-abcdefghijklmnopq` });
  for (const origin of options.granted ?? []) {
    await approvedOrigins.approve(origin);
    await grants.grant(origin);
  }
  const pendingRevocations = new RevocationStore(storage);
  const instanceId = new InstanceIdStore(storage, () => "instance-abcdefghijklmnopqrstu");
  const revocations = new FullAccessRevocations({ link, grants, pending: pendingRevocations, now, logger });
  const windows = new FakeWindows();
  windows.failCreate = options.windowFailure;
  const approvals = new ApprovalBroker({
    store: approvedOrigins,
    consents,
    window: new SingleApprovalWindow(windows, "chrome-extension://pedelec/popup.html?window=approval"),
    timeoutMs: options.approvalTimeoutMs ?? 60_000,
    withdrawGraceMs: 0,
    closeDelayMs: 0,
  });
  const ledger: AutoEndEntry[][] = [];
  const gateway = new PageGateway({
    link,
    approvals,
    approvedOrigins,
    consents,
    grants,
    instanceId,
    revocations,
    logger,
    onAutoEndSessionsChanged: (entries) => void ledger.push(entries),
    statusProbeTimeoutMs: options.statusProbeTimeoutMs ?? 0,
  });
  const connect = (sender: PortSender | undefined = { origin: APP, url: `${APP}/board` }): FakePagePort => {
    const port = new FakePagePort(SDK_PORT_NAME, sender);
    gateway.accept(port);
    return port;
  };
  return {
    host,
    link,
    storage,
    approvals,
    approvedOrigins,
    grants,
    pendingRevocations,
    revocations,
    gateway,
    windows,
    warnings,
    ledger,
    connect,
  };
}

export type GatewayContext = Awaited<ReturnType<typeof setup>>;

/** Waits for the page's answer to `id`. */
export function responseOf(port: FakePagePort, id: string) {
  return vi.waitFor(() => {
    const [response] = port.responsesFor(id);
    if (!response) throw new Error(`no response to ${id} yet`);
    return response;
  }, waitOptions);
}

/** Waits until the host has received a request of `type` (the `index`-th one). */
export function hostRequest(channel: () => FakeNativeChannel, type: string, index = 0): Promise<ExtensionToHostMessage> {
  return vi.waitFor(() => {
    const frame = channel().requests(type)[index];
    if (!frame) throw new Error(`no ${type} request yet`);
    return frame;
  }, waitOptions);
}

/** Creates a session through `port` against an already approved origin and an answering host. */
export async function createSession(
  context: GatewayContext,
  port: FakePagePort,
  sessionId: string,
  options: { id?: string; autoEnd?: boolean; type?: "createSession" | "resumeSession" } = {},
) {
  const id = options.id ?? `create-${sessionId}`;
  const type = options.type ?? "createSession";
  const before = context.host.channels.at(-1)?.requests(type).length ?? 0;
  port.fromPage({ id, type, payload: type === "createSession" ? {} : { sessionId } });
  const frame = await hostRequest(() => context.host.current, type, before);
  context.host.current.respond(frame, sessionInfo(sessionId, options.autoEnd ?? true));
  return responseOf(port, id);
}
