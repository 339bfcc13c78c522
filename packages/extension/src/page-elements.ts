// Small DOM builders shared by the extension's own pages (popup.html, options.html).

/** A button the pages' click handlers recognise by `data-action`; `data` adds further `data-*` attributes. */
export function actionButton(document: Document, action: string, label: string, data: Record<string, string> = {}): HTMLButtonElement {
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.action = action;
  for (const [name, value] of Object.entries(data)) button.dataset[name] = value;
  button.textContent = label;
  return button;
}

export function textBlock(document: Document, className: string, text: string): HTMLDivElement {
  const block = document.createElement("div");
  block.className = className;
  block.textContent = text;
  return block;
}

export function emptyItem(document: Document, text: string): HTMLLIElement {
  const item = document.createElement("li");
  item.className = "empty";
  item.textContent = text;
  return item;
}

export function actionRow(document: Document, ...buttons: HTMLButtonElement[]): HTMLDivElement {
  const actions = document.createElement("div");
  actions.className = "actions";
  actions.append(...buttons);
  return actions;
}

export function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString();
}

export function requireElement(document: Document, id: string): HTMLElement {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page lacks #${id}`);
  return element;
}

export function showStatus(document: Document, text: string, kind: "info" | "error" = "info"): void {
  const status = requireElement(document, "status");
  status.textContent = text;
  status.classList.toggle("error", kind === "error");
}

/** Origins refused recently, each with an Approve button that ends the refusal. Hides its section when empty. */
export function renderRefused(document: Document, refused: readonly { origin: string; until: string }[]): void {
  const list = requireElement(document, "refused");
  const section = list.closest("section");
  if (section) section.hidden = refused.length === 0;
  list.replaceChildren(
    ...refused.map(({ origin, until }) => {
      const item = document.createElement("li");
      item.className = "row";
      const text = document.createElement("div");
      text.append(textBlock(document, "origin", origin), textBlock(document, "when", `not asked again until ${formatTime(until)}`));
      item.append(text, actionButton(document, "approve", "Approve", { origin }));
      return item;
    }),
  );
}
