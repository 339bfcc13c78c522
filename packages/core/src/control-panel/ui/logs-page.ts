import type { LogLevel, PanelLogsAnswer } from "../control-panel-wire.js";
import { element, localTime, replaceChildren } from "./dom.js";
import { callPanel } from "./panel-client.js";

const LEVELS: readonly LogLevel[] = ["trace", "debug", "info", "warn", "error", "fatal"];

/** Core's recent log lines, newest first, searched by text and least level. */
export function mountLogsPage(container: HTMLElement): () => void {
  const text = element("input", { type: "search", name: "text", placeholder: "search", "data-filter": "text" });
  const level = element(
    "select",
    { name: "level", "data-filter": "level" },
    ...LEVELS.map((name) => element("option", { value: name }, `${name} and above`)),
  );
  const refresh = element("button", { type: "button", "data-action": "refresh-logs" }, "Refresh");
  const state = element("p", { "data-role": "status" });
  const body = element("tbody");
  replaceChildren(
    container,
    element("h1", {}, "Logs"),
    element("div", { class: "filters" }, text, " ", level, " ", refresh),
    state,
    element(
      "table",
      { "data-role": "logs" },
      element("thead", {}, element("tr", {}, ...["Time", "Level", "Message", "Fields", "File"].map((title) => element("th", {}, title)))),
      body,
    ),
  );

  let stopped = false;
  let asked = 0;
  const load = async (): Promise<void> => {
    const ask = ++asked;
    const query = new URLSearchParams({ text: text.value, level: level.value });
    try {
      const answer = await callPanel<PanelLogsAnswer>(`logs?${query}`);
      if (stopped || ask !== asked) return;
      state.textContent =
        answer.lines.length === 0 ? "No matching lines." : answer.truncated ? `The newest ${answer.lines.length} matching lines.` : "";
      replaceChildren(
        body,
        ...answer.lines.map((line) =>
          element(
            "tr",
            { "data-level": line.level ?? "" },
            element("td", {}, localTime(line.time)),
            element("td", {}, line.level ?? ""),
            element("td", {}, line.message),
            element("td", {}, element("code", {}, Object.keys(line.fields).length === 0 ? "" : JSON.stringify(line.fields))),
            element("td", {}, line.file),
          ),
        ),
      );
    } catch (error) {
      state.textContent = `Could not read the logs: ${String(error)}`;
    }
  };
  let typing: ReturnType<typeof setTimeout> | undefined;
  text.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => void load(), 250);
  });
  level.addEventListener("change", () => void load());
  refresh.addEventListener("click", () => void load());
  void load();
  return () => {
    stopped = true;
    clearTimeout(typing);
  };
}
