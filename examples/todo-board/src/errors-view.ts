import { createElement } from "./dom.js";
import { describeError, ERROR_LAYER_LABELS, errorLayerOf } from "./error-layer.js";
import { textWithCommands } from "./remedy-text.js";

/**
 * Adds one `.error[data-code][data-layer]` item: which layer failed, the code and the message, and under them the
 * `.error-remedy` that says what to do next (commands in `code`).
 */
export function showError(container: HTMLElement, error: unknown): HTMLElement {
  const { code, message, remedy } = describeError(error);
  const layer = errorLayerOf(code);
  const item = createElement("li", { className: "error", data: { code, layer } });
  item.append(
    // The spaces keep the element's plain text readable ("provider PROVIDER_FAILED …") for copy and tests.
    createElement("span", { className: "error-layer", text: ERROR_LAYER_LABELS[layer] }),
    " ",
    createElement("code", { className: "error-code", text: code }),
    " ",
    createElement("span", { className: "error-message", text: message }),
  );
  if (remedy !== undefined) {
    const remedyElement = createElement("div", { className: "error-remedy" });
    remedyElement.append(...textWithCommands(remedy).map((part) => (part.command ? createElement("code", { text: part.text }) : part.text)));
    item.append(" ", remedyElement);
  }
  container.append(item);
  item.scrollIntoView({ block: "nearest" });
  return item;
}
