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

/** Token counts as one short text, e.g. "1,200 in (1,000 cached) · 80 out · 1,280 total"; "none" when nothing was reported. */
export function tokenSummary(usage: { inputTokens?: number; outputTokens?: number; cachedInputTokens?: number; totalTokens?: number }): string {
  const count = (value: number): string => value.toLocaleString();
  const parts: string[] = [];
  if (usage.inputTokens !== undefined) {
    parts.push(`${count(usage.inputTokens)} in${usage.cachedInputTokens === undefined ? "" : ` (${count(usage.cachedInputTokens)} cached)`}`);
  } else if (usage.cachedInputTokens !== undefined) {
    parts.push(`${count(usage.cachedInputTokens)} cached in`);
  }
  if (usage.outputTokens !== undefined) parts.push(`${count(usage.outputTokens)} out`);
  if (usage.totalTokens !== undefined) parts.push(`${count(usage.totalTokens)} total`);
  return parts.length === 0 ? "none" : parts.join(" · ");
}

/** A time as the user's locale shows it, or an empty string. */
export function localTime(iso: string | null): string {
  if (iso === null) return "";
  const date = new Date(iso);
  return Number.isFinite(date.getTime()) ? date.toLocaleString() : iso;
}
