import { createElement } from "./dom.js";
import { describeError, ERROR_LAYER_LABELS, errorLayerOf } from "./error-layer.js";

/** Adds one `.error[data-code][data-layer]` line: which layer failed, the code and the message. */
export function showError(container: HTMLElement, error: unknown): HTMLElement {
  const { code, message } = describeError(error);
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
  container.append(item);
  item.scrollIntoView({ block: "nearest" });
  return item;
}
