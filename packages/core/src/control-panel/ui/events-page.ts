import type { PanelDroppedNotice, PanelEvent } from "../control-panel-wire.js";
import { element, replaceChildren, tokenSummary } from "./dom.js";
import { openEventStream } from "./panel-client.js";

/** Rows kept in the page; older ones go, so a long session never makes the page grow without end. */
export const MAX_EVENT_ROWS = 500;

interface Filters {
  session: string;
  provider: string;
  type: string;
}

/** A monitor of every session event as it happens, filtered by session, provider and type. */
export function mountEventsPage(container: HTMLElement): () => void {
  const filters: Filters = { session: "", provider: "", type: "" };
  const input = (name: keyof Filters, placeholder: string): HTMLInputElement => {
    const field = element("input", { type: "search", name, placeholder, "data-filter": name });
    field.addEventListener("input", () => {
      filters[name] = field.value.trim();
      for (const row of list.children) applyFilter(row as HTMLElement);
    });
    return field;
  };
  const state = element("p", { "data-role": "stream-state" }, "Connecting…");
  const list = element("ol", { "data-role": "events", reversed: true });
  replaceChildren(
    container,
    element("h1", {}, "Live events"),
    element("div", { class: "filters" }, input("session", "session id"), input("provider", "provider"), input("type", "event type")),
    state,
    list,
  );

  const applyFilter = (row: HTMLElement): void => {
    const matches =
      (row.dataset.sessionId ?? "").includes(filters.session) &&
      (row.dataset.provider ?? "").includes(filters.provider) &&
      (row.dataset.eventType ?? "").includes(filters.type);
    row.hidden = !matches;
  };
  const add = (row: HTMLElement): void => {
    applyFilter(row);
    list.prepend(row);
    while (list.childElementCount > MAX_EVENT_ROWS) list.lastElementChild?.remove();
  };

  const stream = openEventStream();
  stream.addEventListener("open", () => (state.textContent = "Live."));
  stream.addEventListener("error", () => (state.textContent = "Disconnected; reconnecting…"));
  stream.addEventListener("session-event", (message) => {
    const { origin, provider, envelope } = JSON.parse((message as MessageEvent<string>).data) as PanelEvent;
    const { event } = envelope;
    add(
      element(
        "li",
        { "data-session-id": envelope.sessionId, "data-provider": provider, "data-event-type": event.type },
        element("time", {}, new Date(envelope.emittedAt).toLocaleTimeString()),
        " ",
        element("code", { class: "event-type" }, event.type),
        " ",
        element("span", { class: "muted" }, `${provider} · ${origin} · ${envelope.sessionId} · #${envelope.seq}`),
        element("pre", {}, summary(event)),
      ),
    );
  });
  stream.addEventListener("dropped", (message) => {
    const { count } = JSON.parse((message as MessageEvent<string>).data) as PanelDroppedNotice;
    add(element("li", { "data-role": "dropped", class: "warning" }, `${count} event(s) were left out because this page fell behind.`));
  });
  return () => stream.close();
}

/** The interesting part of an event, as one short text. */
function summary(event: PanelEvent["envelope"]["event"]): string {
  switch (event.type) {
    case "chat-delta":
      return event.delta;
    case "chat-completed":
      return event.text;
    case "status-changed":
      return event.status;
    case "activity-updated":
      return `${event.activity.kind} ${event.activity.status}: ${event.activity.title}`;
    case "usage-updated":
      return `turn ${tokenSummary(event.usage)}; session ${tokenSummary(event.sessionUsage)}`;
    case "artifact-created":
      return `${event.artifact.kind} ${event.artifact.path} (${event.artifact.sizeBytes} bytes, ${event.artifact.mediaType})`;
    case "tool-call-requested":
      return `${event.toolName} ${JSON.stringify(event.args)}`;
    case "tool-call-settled":
      return `${event.toolRequestId}: ${event.outcome}`;
    case "turn-failed":
    case "error-reported":
      return `${event.error.code}: ${event.error.message}`;
    case "session-ended":
      return event.reason;
    case "turn-started":
    case "turn-completed":
      return `${event.turnKind} turn ${event.turnId}`;
  }
}
