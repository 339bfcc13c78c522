// The board's tools driven the way the agent drives them, through the SDK, the extension and the desktop, all stood in
// for by the testing kit: no Chrome, no desktop runtime, no agent CLI.
import { PedelecError } from "@kaoruisaac/pedelec";
import { createPedelecTestKit, type PedelecTestKit } from "@kaoruisaac/pedelec/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createTodoStore } from "./todo-store.js";
import { createTodoTools, TODO_BOARD_GUIDANCE, type TodoToolCall } from "./todo-tools.js";

let kit: PedelecTestKit;
afterEach(async () => {
  await kit.dispose();
});

async function boardSession() {
  kit = createPedelecTestKit({ origin: "https://todo.example" });
  const store = createTodoStore([{ title: "Write docs" }, { title: "Fix bug", column: "doing" }]);
  const calls: TodoToolCall[] = [];
  const tools = createTodoTools(store, (call) => calls.push(call));
  const session = await kit.pedelec.createSession({ provider: "claude", skills: { guidance: TODO_BOARD_GUIDANCE, tools } });
  return { store, calls, session };
}

/** What a tool call made by the agent settled with: the page's result, or the error code it got. */
async function outcomeOf(call: Promise<unknown>): Promise<unknown> {
  try {
    return { result: await call };
  } catch (error) {
    if (error instanceof PedelecError) return { code: error.code, message: error.message };
    throw error;
  }
}

describe("the todo board's tools, called by a scripted agent", () => {
  it("lets the agent read the board, add a card and move one, and tell the user", async () => {
    const { store, calls, session } = await boardSession();
    const seen: unknown[] = [];
    kit.agent.onTurn(async (turn) => {
      expect(turn.guidance).toBe(TODO_BOARD_GUIDANCE);
      expect(turn.tools.map((tool) => tool.name)).toEqual(["list_todos", "add_todo", "move_todo"]);
      turn.activity("Reading the board");
      seen.push(await turn.callTool("list_todos", {}));
      const added = await turn.callTool<{ id: string }>("add_todo", { title: "Buy milk" });
      seen.push(added);
      seen.push(await turn.callTool("move_todo", { id: "t2", column: "done" }));
      turn.delta(`Added ${added.id} `);
      turn.delta("and finished t2.");
      turn.complete();
    });
    const replies: string[] = [];
    session.onChat((message) => replies.push(message.text));

    await session.sendText("Add milk and close the bug");

    expect(seen).toEqual([
      [
        { id: "t1", title: "Write docs", column: "todo" },
        { id: "t2", title: "Fix bug", column: "doing" },
      ],
      { id: "t3", title: "Buy milk", column: "todo" },
      { id: "t2", title: "Fix bug", column: "done" },
    ]);
    expect(store.list().map((card) => [card.id, card.column])).toEqual([
      ["t1", "todo"],
      ["t2", "done"],
      ["t3", "todo"],
    ]);
    expect(calls.map((call) => [call.toolName, call.ok])).toEqual([
      ["list_todos", true],
      ["add_todo", true],
      ["move_todo", true],
    ]);
    expect(replies).toEqual(["Added t3 and finished t2."]);
    expect(kit.toolCalls.map((call) => [call.toolName, call.outcome, call.claimedBy])).toEqual([
      ["list_todos", "answered", "page-1"],
      ["add_todo", "answered", "page-1"],
      ["move_todo", "answered", "page-1"],
    ]);
  });

  it("keeps the board unchanged when the agent sends bad arguments, and tells the agent why", async () => {
    const { store, session } = await boardSession();
    const outcomes: unknown[] = [];
    kit.agent.onTurn(async (turn) => {
      // The desktop refuses what breaks the declared schema before the page sees it…
      outcomes.push(await outcomeOf(turn.callTool("add_todo", { title: "" })));
      outcomes.push(await outcomeOf(turn.callTool("move_todo", { id: "t1", column: "later" })));
      // …and the page's handlers refuse what the schema cannot express.
      outcomes.push(await outcomeOf(turn.callTool("add_todo", { title: "   " })));
      outcomes.push(await outcomeOf(turn.callTool("move_todo", { id: "t99", column: "done" })));
      turn.complete("Nothing changed.");
    });

    await session.sendText("Try some bad calls");

    expect(outcomes).toEqual([
      { code: "TOOL_ARGS_INVALID", message: expect.stringMatching(/\/title must have at least 1 characters/) },
      { code: "TOOL_ARGS_INVALID", message: expect.stringMatching(/\/column must be one of the allowed values/) },
      { code: "TOOL_HANDLER_ERROR", message: expect.stringMatching(/"title" must not be empty/) },
      { code: "TOOL_HANDLER_ERROR", message: expect.stringMatching(/no card has the id "t99"; call list_todos/) },
    ]);
    expect(store.list()).toHaveLength(2);
    // Only the two calls that passed the desktop's check reached the page.
    expect(kit.toolCalls.map((call) => call.args)).toEqual([{ title: "   " }, { id: "t99", column: "done" }]);
  });

  it("runs each call in exactly one tab when two tabs follow the session", async () => {
    const { store, session } = await boardSession();
    // The board lives in each page: the second tab has its own store and its own handlers.
    const otherStore = createTodoStore([{ title: "Write docs" }, { title: "Fix bug", column: "doing" }]);
    const otherTab = await kit.createClient({ name: "tab-2" }).resumeSession(session.sessionId, { tools: createTodoTools(otherStore) });
    const otherTabChat: string[] = [];
    otherTab.onChat((message) => otherTabChat.push(message.text));
    kit.agent.onTurn(async (turn) => {
      await turn.callTool("add_todo", { title: "Plan the week", column: "doing" });
      turn.complete("Planned.");
    });

    await session.sendText("Plan the week");

    const added = [...store.list(), ...otherStore.list()].filter((card) => card.title === "Plan the week");
    expect(added).toHaveLength(1);
    await expect.poll(() => otherTabChat, { timeout: 1_000 }).toEqual(["Planned."]);
    expect(kit.toolCalls).toEqual([expect.objectContaining({ toolName: "add_todo", outcome: "answered" })]);
    expect(["page-1", "tab-2"]).toContain(kit.toolCalls[0]?.claimedBy);
  });
});
