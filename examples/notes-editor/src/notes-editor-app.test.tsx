// @vitest-environment jsdom
// The editor as the user sees it, with the agent, the extension and the desktop runtime played by the testing kit.
import { PedelecError } from "@kaoruisaac/pedelec";
import { PedelecProvider } from "@kaoruisaac/pedelec/react";
import { createPedelecTestKit, type PedelecTestKit, type ScriptedTurn } from "@kaoruisaac/pedelec/testing";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NotesEditorApp } from "./notes-editor-app.js";
import type { Note } from "./notes-store.js";

const NOTES: readonly Note[] = [
  { id: "groceries", title: "Groceries", text: "Milk\nEggs" },
  { id: "ideas", title: "Ideas", text: "Write a notes editor" },
];

let kit: PedelecTestKit;
beforeEach(() => {
  // Tool calls wait for a click here: give them longer than the kit's default two seconds.
  kit = createPedelecTestKit({ origin: "https://notes.test", toolTimeoutMs: 15_000, waitTimeoutMs: 5_000 });
});
afterEach(async () => {
  cleanup();
  await kit.dispose();
});

const byId = (id: string): HTMLElement => {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`no #${id} on the page`);
  return element;
};
const noteText = (): string => (byId("note-text") as HTMLTextAreaElement).value;
const turnOutcome = (): string | null => document.getElementById("turn-outcome")?.getAttribute("data-outcome") ?? null;

/** Renders the editor and connects; the kit approves the origin at once. */
async function renderConnected(): Promise<void> {
  render(
    <PedelecProvider client={kit.pedelec}>
      <NotesEditorApp initialNotes={NOTES} />
    </PedelecProvider>,
  );
  fireEvent.click(screen.getByRole("button", { name: "Connect" }));
  await waitFor(() => expect(byId("status").textContent).toBe("idle"));
}

/** Sends `message` as the user and returns the agent's turn for it, which stays open until the test ends it. */
async function sendToAgent(message: string): Promise<ScriptedTurn> {
  fireEvent.change(screen.getByLabelText("Message"), { target: { value: message } });
  fireEvent.click(screen.getByRole("button", { name: "Send" }));
  return kit.agent.nextTurn();
}

/** The outcome of a call the agent made: its result, or the PedelecError it was answered with. */
function settled(call: Promise<unknown>): Promise<{ result: unknown } | { error: PedelecError }> {
  return call.then(
    (result) => ({ result }),
    (error: unknown) => ({ error: PedelecError.from(error, "TOOL_HANDLER_ERROR") }),
  );
}

const addCoffee = { id: "groceries", text: "Milk\nEggs\nCoffee", reason: "You asked for coffee." };

describe("an edit the agent proposes", () => {
  it("waits for Accept, then changes the note and tells the agent it was applied", async () => {
    await renderConnected();
    const turn = await sendToAgent("Add coffee to my groceries");
    turn.activity("Reading the groceries");
    const call = settled(turn.callTool("propose_edit", addCoffee));

    const dialog = await screen.findByRole("dialog");
    expect(within(dialog).getByLabelText("Current text").textContent).toBe("Milk\nEggs");
    expect(within(dialog).getByLabelText("Proposed text").textContent).toBe("Milk\nEggs\nCoffee");
    expect(within(dialog).getByText("You asked for coffee.")).toBeTruthy();
    expect(noteText()).toBe("Milk\nEggs");
    expect(byId("status").textContent).toBe("waiting_tool_result");
    expect(within(byId("activity")).getByText("Reading the groceries")).toBeTruthy();

    fireEvent.click(within(dialog).getByRole("button", { name: "Accept" }));
    expect(await call).toEqual({ result: { outcome: "applied", note: { id: "groceries", title: "Groceries", text: "Milk\nEggs\nCoffee" } } });
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(noteText()).toBe("Milk\nEggs\nCoffee");

    expect(byId("usage").textContent).toBe("no tokens reported yet");
    turn.usage({ inputTokens: 1_200, cachedInputTokens: 1_000, outputTokens: 25 });
    turn.delta("Added ");
    turn.delta("coffee.");
    turn.complete();
    await waitFor(() => expect(turnOutcome()).toBe("completed"));
    expect(byId("usage").textContent).toBe("Tokens: 1,200 in (1,000 cached) · 25 out");
    const messages = [...byId("messages").querySelectorAll("li")].map((item) => [item.className, item.textContent]);
    expect(messages).toEqual([
      ["message user", "Add coffee to my groceries"],
      ["message assistant", "Added coffee."],
    ]);
    expect(kit.toolCalls.map((toolCall) => toolCall.outcome)).toEqual(["answered"]);
  });

  it("answers Reject so, and leaves the note as it was", async () => {
    await renderConnected();
    const turn = await sendToAgent("Replace the eggs");
    const call = settled(turn.callTool("replace_note_text", { id: "groceries", find: "Eggs", replace: "Butter" }));
    const dialog = await screen.findByRole("dialog");
    expect(within(dialog).getByLabelText("Proposed text").textContent).toBe("Milk\nButter");

    fireEvent.click(within(dialog).getByRole("button", { name: "Reject" }));
    expect(await call).toEqual({ result: { outcome: "rejected", message: "The user rejected the edit; the note is unchanged." } });
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(noteText()).toBe("Milk\nEggs");
    turn.complete("Kept the eggs.");
    await waitFor(() => expect(turnOutcome()).toBe("completed"));
  });

  it("closes when the user cancels the turn, and the call ends with the cancel instead of an answer", async () => {
    await renderConnected();
    const turn = await sendToAgent("Add coffee");
    const call = settled(turn.callTool("propose_edit", addCoffee));
    await screen.findByRole("dialog");

    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    const outcome = await call;
    expect("error" in outcome && outcome.error.code).toBe("TURN_CANCELLED");
    await waitFor(() => expect(turnOutcome()).toBe("TURN_CANCELLED"));
    // The page's handler never answered: the cancel settled the call.
    expect(kit.toolCalls.map((toolCall) => [toolCall.outcome, toolCall.answer])).toEqual([["cancelled", undefined]]);
    expect(noteText()).toBe("Milk\nEggs");
    expect(document.getElementById("error")).toBeNull();
    expect(byId("status").textContent).toBe("idle");
  });

  it("closes when the session ends while it waits", async () => {
    await renderConnected();
    const turn = await sendToAgent("Add coffee");
    const call = settled(turn.callTool("propose_edit", addCoffee));
    await screen.findByRole("dialog");

    fireEvent.click(screen.getByRole("button", { name: "Disconnect" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    const outcome = await call;
    expect("error" in outcome && outcome.error.code).toBe("SESSION_ENDED");
    expect(noteText()).toBe("Milk\nEggs");
  });
});

describe("arguments that do not fit a tool's schema", () => {
  it("are answered TOOL_ARGS_INVALID and never reach a handler", async () => {
    await renderConnected();
    const turn = await sendToAgent("Edit something");
    // The desktop's check (the JSON Schema made from the zod schema): the page never sees the call.
    const missingText = await settled(turn.callTool("propose_edit", { id: "groceries" }));
    // The page's own zod check, for what JSON Schema cannot say or a desktop that let it through.
    const wrongType = await settled(turn.callTool("propose_edit", { id: "groceries", text: 42 }, { checkArgs: false }));
    const sameText = await settled(turn.callTool("replace_note_text", { id: "groceries", find: "Eggs", replace: "Eggs" }));
    const emptyId = await settled(turn.callTool("read_note", { id: "" }, { checkArgs: false }));

    for (const outcome of [missingText, wrongType, sameText, emptyId]) {
      expect("error" in outcome && outcome.error.code).toBe("TOOL_ARGS_INVALID");
    }
    expect("error" in sameText && sameText.error.message).toContain("find and replace are the same text");
    // Each call answered by the page came back from its schema check; none opened the dialog or got a handler's error.
    expect(kit.toolCalls.map((toolCall) => toolCall.answer?.ok === false && toolCall.answer.error.code)).toEqual([
      "TOOL_ARGS_INVALID",
      "TOOL_ARGS_INVALID",
      "TOOL_ARGS_INVALID",
    ]);
    expect(screen.queryByRole("dialog")).toBeNull();

    // Valid arguments still reach the handler afterwards.
    expect(await settled(turn.callTool("read_note", { id: "ideas" }))).toEqual({ result: NOTES[1] });
    turn.complete();
    await waitFor(() => expect(turnOutcome()).toBe("completed"));
    expect(noteText()).toBe("Milk\nEggs");
  });
});
