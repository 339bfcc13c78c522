import { mountEventsPage } from "./events-page.js";
import { mountLogsPage } from "./logs-page.js";
import { mountOriginsPage } from "./origins-page.js";
import { mountProvidersPage } from "./providers-page.js";
import { mountSessionsPage } from "./sessions-page.js";

/** Each page draws itself into the main element and returns what stops its timers and streams. */
const PAGES: Record<string, (container: HTMLElement) => () => void> = {
  sessions: mountSessionsPage,
  events: mountEventsPage,
  providers: mountProvidersPage,
  origins: mountOriginsPage,
  logs: mountLogsPage,
};

let leave: (() => void) | undefined;

function show(): void {
  const container = document.getElementById("page");
  if (container === null) return;
  const name = Object.hasOwn(PAGES, location.hash.slice(1)) ? location.hash.slice(1) : "sessions";
  leave?.();
  leave = PAGES[name]!(container);
  for (const link of document.querySelectorAll<HTMLAnchorElement>("nav a[data-page]")) {
    if (link.dataset.page === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

window.addEventListener("hashchange", show);
show();
