import { portTransport } from "@pedelec/protocol/port-transport";
import { CachedStorage } from "./cached-storage.js";
import type { KeyValueStorage } from "./key-value-storage.js";
import type { NativeChannel } from "./native-channel.js";
import type { WindowsApi } from "./approval-window.js";
import type { ApprovalsChanged } from "./internal-messages.js";

// The service worker's only door to `chrome.*` besides its entry point; everything it returns is a plain interface.
// (The extension's own pages reach the worker through extension-page-client.ts.)

/** A `chrome.storage` area, read through an in-memory copy that follows its change events (see CachedStorage). */
export function chromeStorageArea(area: chrome.storage.StorageArea): KeyValueStorage {
  const direct: KeyValueStorage = {
    async get(key) {
      const items: Record<string, unknown> = await area.get(key);
      return items[key];
    },
    async set(key, value) {
      await area.set({ [key]: value });
    },
  };
  return new CachedStorage(direct, (listener) => area.onChanged.addListener(listener));
}

export function connectChromeNative(hostName: string): NativeChannel {
  return portTransport(chrome.runtime.connectNative(hostName), () => chrome.runtime.lastError?.message);
}

/** Where the approval window points; the marker tells it apart from the toolbar popup showing the same page. */
export function approvalWindowUrl(): string {
  return chrome.runtime.getURL("popup.html?window=approval");
}

export function chromeWindowsApi(): WindowsApi {
  return {
    async create(url) {
      const window = await chrome.windows.create({ url, type: "popup", width: 440, height: 560, focused: true });
      return window?.id;
    },
    async focus(windowId) {
      await chrome.windows.update(windowId, { focused: true, drawAttention: true });
    },
    async remove(windowId) {
      await chrome.windows.remove(windowId);
    },
    onRemoved: (listener) => chrome.windows.onRemoved.addListener(listener),
    async showing(url) {
      const contexts = await chrome.runtime.getContexts({ contextTypes: ["TAB"] });
      const windowIds = contexts.filter((context) => context.documentUrl === url && context.windowId >= 0).map((context) => context.windowId);
      return [...new Set(windowIds)];
    },
  };
}

/** Nudges open extension pages to refresh. With none open Chrome rejects the send; that is expected. */
export function broadcastApprovalsChanged(): void {
  const message: ApprovalsChanged = { type: "approvals-changed" };
  chrome.runtime.sendMessage(message).catch(() => undefined);
}

/** True for messages from this extension's own pages (the popup, the options page), never from web pages or other extensions. */
export function isFromOwnExtensionPage(sender: chrome.runtime.MessageSender): boolean {
  return sender.id === chrome.runtime.id && (sender.url ?? "").startsWith(chrome.runtime.getURL(""));
}
