import type { PanelOriginsAnswer } from "../control-panel-wire.js";
import { element, replaceChildren } from "./dom.js";
import { callPanel } from "./panel-client.js";

/** The origins that created sessions, with counts, and where their approvals are changed. */
export function mountOriginsPage(container: HTMLElement): () => void {
  const body = element("tbody");
  const note = element("p", { "data-role": "options-note" });
  replaceChildren(
    container,
    element("h1", {}, "Origins"),
    note,
    element(
      "table",
      { "data-role": "origins" },
      element(
        "thead",
        {},
        element("tr", {}, element("th", {}, "Origin"), element("th", {}, "Live sessions"), element("th", {}, "Ended sessions kept")),
      ),
      body,
    ),
  );
  let stopped = false;
  void callPanel<PanelOriginsAnswer>("origins").then(
    ({ origins, extensionOptionsUrl }) => {
      if (stopped) return;
      // Browsers do not let a web page open an extension's page, so the address is also shown to copy.
      replaceChildren(
        note,
        "Approvals and Full Access are changed in the extension's options page: ",
        element("a", { href: extensionOptionsUrl, target: "_blank", rel: "noreferrer", "data-role": "extension-options" }, extensionOptionsUrl),
        " (or the Pedelec icon's menu → Options).",
      );
      replaceChildren(
        body,
        ...origins.map((entry) =>
          element(
            "tr",
            { "data-origin": entry.origin },
            element("td", {}, entry.origin),
            element("td", {}, String(entry.live)),
            element("td", {}, String(entry.ended)),
          ),
        ),
      );
      if (origins.length === 0) body.append(element("tr", {}, element("td", { colspan: "3" }, "No page has created a session yet.")));
    },
    (error: unknown) => (note.textContent = `Could not list origins: ${String(error)}`),
  );
  return () => {
    stopped = true;
  };
}
