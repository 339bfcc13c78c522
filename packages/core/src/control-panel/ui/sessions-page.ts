import type { PanelSession } from "../control-panel-wire.js";
import { element, localTime, replaceChildren, tokenSummary } from "./dom.js";
import { PanelRequestError, callPanel } from "./panel-client.js";

const REFRESH_MS = 2_000;

/** Every live session, refreshed every two seconds, with Cancel turn and End session. */
export function mountSessionsPage(container: HTMLElement): () => void {
  const status = element("p", { "data-role": "status" });
  const body = element("tbody");
  const table = element(
    "table",
    { "data-role": "sessions" },
    element(
      "thead",
      {},
      element(
        "tr",
        {},
        ...["Origin", "Provider", "Effort", "Model", "Workspace", "Status", "Turns", "Tokens", "Started", ""].map((title) =>
          element("th", {}, title),
        ),
      ),
    ),
    body,
  );
  replaceChildren(container, element("h1", {}, "Sessions"), status, table);

  const act = async (session: PanelSession, action: "cancel" | "end"): Promise<void> => {
    try {
      await callPanel(`sessions/${encodeURIComponent(session.sessionId)}/${action}`, { method: "POST" });
      status.textContent = action === "cancel" ? `Cancelled the turn of ${session.sessionId}.` : `Ended ${session.sessionId}.`;
    } catch (error) {
      status.textContent = error instanceof PanelRequestError ? `${error.message} [${error.code}]` : String(error);
    }
    await refresh();
  };

  const row = (session: PanelSession): HTMLTableRowElement => {
    const cancel = element("button", { type: "button", "data-action": "cancel-turn", disabled: !session.turnRunning }, "Cancel turn");
    const end = element("button", { type: "button", "data-action": "end-session" }, "End session");
    cancel.addEventListener("click", () => void act(session, "cancel"));
    end.addEventListener("click", () => void act(session, "end"));
    return element(
      "tr",
      { "data-session-id": session.sessionId, "data-status": session.status },
      element("td", {}, session.origin),
      element("td", {}, session.provider),
      // A profile's level, or the explicit effort the page named with its model.
      element("td", {}, session.effortLevel ?? `${session.effort ?? "?"} (explicit)`),
      element("td", {}, session.model ?? "(default)"),
      element("td", { title: session.workspace.managed ? "managed by Pedelec" : "the page's folder" }, session.workspace.path),
      element("td", { "data-role": "status" }, session.status),
      element("td", { "data-role": "turns" }, String(session.turnCount)),
      element("td", { "data-role": "tokens" }, tokenSummary(session.usage ?? {})),
      element("td", {}, localTime(session.sessionCreatedAt)),
      element("td", {}, cancel, " ", end),
    );
  };

  let stopped = false;
  const refresh = async (): Promise<void> => {
    try {
      const sessions = await callPanel<PanelSession[]>("sessions");
      if (stopped) return;
      replaceChildren(body, ...sessions.map(row));
      if (sessions.length === 0) body.append(element("tr", {}, element("td", { colspan: "10" }, "No live sessions.")));
    } catch (error) {
      status.textContent = `Could not list sessions: ${String(error)}`;
    }
  };
  void refresh();
  const timer = setInterval(() => void refresh(), REFRESH_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
