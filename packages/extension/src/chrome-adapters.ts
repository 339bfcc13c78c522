import type { KeyValueStorage } from "./key-value-storage.js";
import type { NativeChannel } from "./native-channel.js";
import type { ApprovalsChanged } from "./internal-messages.js";

// The only file besides the two entry points that touches `chrome.*`; everything it returns is a plain interface.

export function chromeStorageArea(area: chrome.storage.StorageArea): KeyValueStorage {
  return {
    async get(key) {
      const items: Record<string, unknown> = await area.get(key);
      return items[key];
    },
    async set(key, value) {
      await area.set({ [key]: value });
    },
  };
}

export function connectChromeNative(hostName: string): NativeChannel {
  const port = chrome.runtime.connectNative(hostName);
  return {
    postMessage: (message) => port.postMessage(message),
    disconnect: () => port.disconnect(),
    onMessage: (listener) => port.onMessage.addListener((message: unknown) => listener(message)),
    // lastError is only meaningful inside the onDisconnect callback, so it is read right there.
    onDisconnect: (listener) => port.onDisconnect.addListener(() => listener(chrome.runtime.lastError?.message)),
  };
}

export async function openApprovalWindow(approvalId: string, onDismissed: () => void): Promise<void> {
  const window = await chrome.windows.create({
    url: chrome.runtime.getURL("popup.html?request=" + encodeURIComponent(approvalId)),
    type: "popup",
    width: 420,
    height: 520,
  });
  const windowId = window?.id;
  if (windowId === undefined) return;
  const onRemoved = (removedId: number): void => {
    if (removedId !== windowId) return;
    chrome.windows.onRemoved.removeListener(onRemoved);
    onDismissed();
  };
  chrome.windows.onRemoved.addListener(onRemoved);
}

/** Nudges open popups to refresh. With no popup open Chrome rejects the send; that is expected. */
export function broadcastApprovalsChanged(): void {
  const message: ApprovalsChanged = { type: "approvals-changed" };
  chrome.runtime.sendMessage(message).catch(() => undefined);
}

/** True for messages from this extension's own pages (the popup), never from web pages or other extensions. */
export function isFromOwnExtensionPage(sender: chrome.runtime.MessageSender): boolean {
  return sender.id === chrome.runtime.id && (sender.url ?? "").startsWith(chrome.runtime.getURL(""));
}
