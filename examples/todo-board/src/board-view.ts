import { createElement } from "./dom.js";
import { isTodoColumn, TODO_COLUMNS, type TodoCard, type TodoColumn, type TodoStore } from "./todo-store.js";

const COLUMN_TITLES: Readonly<Record<TodoColumn, string>> = { todo: "To do", doing: "Doing", done: "Done" };

/**
 * Shows the store in `container` and keeps it in sync; the ◀ ▶ buttons let the user move cards too, so the
 * agent sees the user's changes on its next list_todos. Returns a function that stops the syncing.
 */
export function mountBoard(container: HTMLElement, store: TodoStore): () => void {
  let previous = new Map<string, TodoColumn>();
  const render = (cards: readonly TodoCard[]): void => {
    const changed = new Set(cards.filter((card) => previous.get(card.id) !== card.column).map((card) => card.id));
    // The first render shows the seed cards; nothing has "changed" yet.
    if (previous.size === 0 && container.childElementCount === 0) changed.clear();
    container.replaceChildren(...TODO_COLUMNS.map((column) => renderColumn(column, cards, changed)));
    previous = new Map(cards.map((card) => [card.id, card.column]));
  };

  const handleClick = (event: MouseEvent): void => {
    const button = event.target instanceof Element ? event.target.closest("button[data-move-to]") : null;
    if (!(button instanceof HTMLButtonElement)) return;
    const id = button.closest<HTMLElement>(".card")?.dataset.id;
    const column = button.dataset.moveTo;
    if (id !== undefined && isTodoColumn(column)) store.move(id, column);
  };

  container.addEventListener("click", handleClick);
  const unsubscribe = store.onChange(render);
  render(store.list());
  return () => {
    unsubscribe();
    container.removeEventListener("click", handleClick);
  };
}

function renderColumn(column: TodoColumn, cards: readonly TodoCard[], changed: ReadonlySet<string>): HTMLElement {
  const inColumn = cards.filter((card) => card.column === column);
  const section = createElement("section", { className: "column", data: { column } });
  const heading = createElement("h2", { className: "column-title", text: COLUMN_TITLES[column] });
  heading.append(createElement("span", { className: "column-count", text: String(inColumn.length) }));
  const list = createElement("ol", { className: "cards" });
  list.append(...inColumn.map((card) => renderCard(card, changed.has(card.id))));
  if (inColumn.length === 0) list.append(createElement("li", { className: "cards-empty", text: "Nothing here" }));
  section.append(heading, list);
  return section;
}

function renderCard(card: TodoCard, changed: boolean): HTMLElement {
  const item = createElement("li", {
    className: changed ? "card card-changed" : "card",
    data: { id: card.id, column: card.column },
  });
  const index = TODO_COLUMNS.indexOf(card.column);
  const actions = createElement("div", { className: "card-actions" });
  const back = TODO_COLUMNS[index - 1];
  const forward = TODO_COLUMNS[index + 1];
  if (back !== undefined) actions.append(moveButton(card, back, "◀"));
  if (forward !== undefined) actions.append(moveButton(card, forward, "▶"));
  item.append(
    createElement("span", { className: "card-id", text: card.id }),
    " ",
    createElement("span", { className: "card-title", text: card.title }),
    actions,
  );
  return item;
}

function moveButton(card: TodoCard, column: TodoColumn, symbol: string): HTMLButtonElement {
  return createElement("button", {
    className: "card-move",
    text: symbol,
    data: { moveTo: column },
    attributes: { type: "button", "aria-label": `Move ${card.id} to ${COLUMN_TITLES[column]}`, title: `Move to ${COLUMN_TITLES[column]}` },
  });
}
