/** A new element with attributes and children; text children are set as text, never parsed as HTML. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const created = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    created.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) created.append(child);
  return created;
}

/** Replaces everything inside `parent`. */
export function replaceChildren(parent: Element, ...children: (Node | string)[]): void {
  parent.replaceChildren(...children);
}

/** A time as the user's locale shows it, or an empty string. */
export function localTime(iso: string | null): string {
  if (iso === null) return "";
  const date = new Date(iso);
  return Number.isFinite(date.getTime()) ? date.toLocaleString() : iso;
}
