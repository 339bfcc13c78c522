/** The board's columns, in display order. */
export const TODO_COLUMNS = ["todo", "doing", "done"] as const;
export type TodoColumn = (typeof TODO_COLUMNS)[number];

export const TODO_TITLE_MAX_LENGTH = 200;

/** One card on the board. */
export interface TodoCard {
  readonly id: string;
  readonly title: string;
  readonly column: TodoColumn;
}

export interface NewTodo {
  title: string;
  /** Defaults to "todo". */
  column?: TodoColumn;
}

/**
 * The board's state, kept free of the DOM so the tools and the view share one truth that tests can drive.
 * It enforces its own invariants; callers that take untrusted input validate first for better messages.
 */
export interface TodoStore {
  /** Every card, in creation order. Returns copies, so callers cannot change the board behind its back. */
  list(): TodoCard[];
  get(id: string): TodoCard | undefined;
  add(input: NewTodo): TodoCard;
  /** Moves a card to a column; moving to the column it is in is allowed and changes nothing. */
  move(id: string, column: TodoColumn): TodoCard;
  /** Called with the full list after every change; returns an unsubscribe function. */
  onChange(listener: (cards: TodoCard[]) => void): () => void;
}

export function isTodoColumn(value: unknown): value is TodoColumn {
  return typeof value === "string" && (TODO_COLUMNS as readonly string[]).includes(value);
}

export function createTodoStore(initial: readonly NewTodo[] = []): TodoStore {
  const cards: TodoCard[] = [];
  const listeners = new Set<(cards: TodoCard[]) => void>();
  let lastNumber = 0;

  const list = (): TodoCard[] => cards.map((card) => ({ ...card }));
  const notify = (): void => {
    for (const listener of [...listeners]) listener(list());
  };
  const insert = (input: NewTodo): TodoCard => {
    const title = input.title.trim();
    if (title.length === 0 || title.length > TODO_TITLE_MAX_LENGTH) {
      throw new Error(`A card title must have 1–${TODO_TITLE_MAX_LENGTH} characters`);
    }
    const column = input.column ?? "todo";
    if (!isTodoColumn(column)) throw new Error(`Unknown column "${String(column)}"`);
    lastNumber += 1;
    const card: TodoCard = { id: `t${lastNumber}`, title, column };
    cards.push(card);
    return { ...card };
  };

  for (const input of initial) insert(input);

  return {
    list,
    get(id) {
      const card = cards.find((candidate) => candidate.id === id);
      return card === undefined ? undefined : { ...card };
    },
    add(input) {
      const card = insert(input);
      notify();
      return card;
    },
    move(id, column) {
      if (!isTodoColumn(column)) throw new Error(`Unknown column "${String(column)}"`);
      const index = cards.findIndex((candidate) => candidate.id === id);
      const card = cards[index];
      if (card === undefined) throw new Error(`No card has the id "${id}"`);
      if (card.column === column) return { ...card };
      const moved: TodoCard = { ...card, column };
      cards[index] = moved;
      notify();
      return { ...moved };
    },
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
