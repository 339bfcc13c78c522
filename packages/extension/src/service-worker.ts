// First: zod must be told before any schema is built (module evaluation order follows the imports).
import "./zod-jitless.js";
import { NATIVE_HOST_NAME } from "@pedelec/protocol/native-wire";
import { ApprovalBroker } from "./approval-broker.js";
import { ApprovalStore } from "./approval-store.js";
import { AutoEndLedger } from "./auto-end-ledger.js";
import { SingleApprovalWindow } from "./approval-window.js";
import {
  approvalWindowUrl,
  broadcastApprovalsChanged,
  chromeStorageArea,
  chromeWindowsApi,
  connectChromeNative,
  isFromOwnExtensionPage,
} from "./chrome-adapters.js";
import { FullAccessGrantStore } from "./full-access-grants.js";
import { FullAccessRevocations } from "./full-access-revocations.js";
import { InstanceIdStore } from "./instance-id.js";
import { consoleLogger } from "./logger.js";
import { NativeLink } from "./native-link.js";
import { PageGateway } from "./page-gateway.js";
import { createPopupRequestHandler } from "./popup-requests.js";
import { RevocationStore } from "./revocation-store.js";
import { WorkspaceConsentStore } from "./workspace-consent-store.js";

const logger = consoleLogger;
/** How long the warm-up at browser start waits for the host's first word; the link stays open either way. */
const DESKTOP_LINK_WARM_TIMEOUT_MS = 15_000;
const localStorageArea = chromeStorageArea(chrome.storage.local);
const approvedOrigins = new ApprovalStore(localStorageArea);
const consents = new WorkspaceConsentStore(localStorageArea);
const grants = new FullAccessGrantStore(localStorageArea, approvedOrigins);
const pendingRevocations = new RevocationStore(localStorageArea);
const instanceId = new InstanceIdStore(localStorageArea);
const ledger = new AutoEndLedger(chromeStorageArea(chrome.storage.session), logger);
// Read what a previous worker left before this one records anything.
const orphans = ledger.takeOrphans();

const approvals = new ApprovalBroker({
  store: approvedOrigins,
  consents,
  window: new SingleApprovalWindow(chromeWindowsApi(), approvalWindowUrl()),
  onChange: broadcastApprovalsChanged,
});
const link = new NativeLink({ connect: () => connectChromeNative(NATIVE_HOST_NAME), logger });
const revocations = new FullAccessRevocations({ link, grants, pending: pendingRevocations, logger, onChange: broadcastApprovalsChanged });
const gateway = new PageGateway({
  link,
  approvals,
  approvedOrigins,
  consents,
  grants,
  instanceId,
  revocations,
  logger,
  onAutoEndSessionsChanged: (entries) => void ledger.record(entries),
});
const handlePopupRequest = createPopupRequestHandler({
  approvals,
  approvedOrigins,
  consents,
  grants,
  revocations,
  pendingRevocations,
  link,
  onChange: broadcastApprovalsChanged,
});

// MV3 only delivers events to listeners registered synchronously at startup.
chrome.runtime.onConnectExternal.addListener((port) => gateway.accept(port));
// A user who approved a site works with the agent: the desktop link (and through the host, Core) opens as this worker
// starts, which the onStartup listener makes happen as the browser starts, rather than when a page first asks and
// then waits for the host and Core to start. Once open, the link stays open for the worker's life, as after any use.
const warmDesktopLink = (): void => {
  if (link.state !== "closed") return;
  void approvedOrigins.list().then(
    (origins) => (origins.length > 0 ? link.probe(DESKTOP_LINK_WARM_TIMEOUT_MS) : undefined),
    () => undefined,
  );
};
chrome.runtime.onStartup.addListener(warmDesktopLink);
warmDesktopLink();
chrome.runtime.onMessage.addListener((message: unknown, sender, sendResponse) => {
  if (!isFromOwnExtensionPage(sender)) return false;
  void handlePopupRequest(message).then(sendResponse);
  return true;
});

void orphans.then((entries) => gateway.endOrphans(entries));
// The previous worker's native connection died with it, and Core may still run Full Access work it was told to stop.
void revocations.deliverAll();
