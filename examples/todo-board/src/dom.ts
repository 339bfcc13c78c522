export interface ElementOptions {
  className?: string;
  /** Set as textContent: agent-written text never becomes markup. */
  text?: string;
  data?: Record<string, string>;
  attributes?: Record<string, string>;
}

export function createElement<TTag extends keyof HTMLElementTagNameMap>(tag: TTag, options: ElementOptions = {}): HTMLElementTagNameMap[TTag] {
  const element = document.createElement(tag);
  if (options.className !== undefined) element.className = options.className;
  if (options.text !== undefined) element.textContent = options.text;
  for (const [key, value] of Object.entries(options.data ?? {})) element.dataset[key] = value;
  for (const [key, value] of Object.entries(options.attributes ?? {})) element.setAttribute(key, value);
  return element;
}

/** The element with this id, checked to be of the expected kind (a missing hook is a bug in index.html). */
export function requireElement<TElement extends HTMLElement>(id: string, kind: abstract new (...args: never[]) => TElement): TElement {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) throw new Error(`index.html has no #${id} of the expected kind`);
  return element;
}
