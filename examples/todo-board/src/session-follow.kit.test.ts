// The board's session view when the desktop runtime goes away and comes back, with the testing kit standing in for
// the extension, the native host and Core: no Chrome, no desktop runtime, no agent CLI.
import type { Activity, PedelecError } from "@kaoruisaac/pedelec";
import { createPedelecTestKit, type PedelecTestKit } from "@kaoruisaac/pedelec/testing";
import { afterEach, describe, expect, it } from "vitest";
import { ChatTranscript } from "./chat-transcript.js";
import { describeError } from "./error-layer.js";
import { CORE_LOST_NOTE, followSession, type SessionView } from "./session-follow.js";
import { createTodoStore } from "./todo-store.js";
import { createTodoTools, TODO_BOARD_GUIDANCE } from "./todo-tools.js";

let kit: PedelecTestKit;
afterEach(async () => {
  await kit.dispose();
});

/** The page's view, kept as plain data: the chat, the activity lines by key, and the errors as the page shows them. */
function recordingView() {
  const activities = new Map<string, string>();
  const errors: { code: string; message: string; remedy: string | undefined }[] = [];
  const view: SessionView = {
    transcript: new ChatTranscript(),
    showActivity: (key: string, activity: Activity) => void activities.set(key, activity.status),
    stopOpenActivities: () => {
      for (const [key, status] of activities) if (status === "started") activities.set(key, "stopped");
    },
    reportError: (error: PedelecError) => void errors.push(describeError(error)),
    statusChanged: () => undefined,
  };
  return { view, activities, errors };
}

async function boardSession() {
  kit = createPedelecTestKit({ origin: "https://todo.example" });
  const tools = createTodoTools(createTodoStore([{ title: "Write docs" }]));
  const session = await kit.pedelec.createSession({ provider: "claude", skills: { guidance: TODO_BOARD_GUIDANCE, tools } });
  const recorded = recordingView();
  const followed = followSession(session, recorded.view);
  return { session, followed, ...recorded };
}

const lastChat = (view: SessionView) => view.transcript.entries.at(-1);

describe("the board's session view when Core goes away", () => {
  it("stops looking busy when Core dies mid-turn, says the session resumes, and resumes on the next message", async () => {
    const { session, followed, view, activities, errors } = await boardSession();
    const sending = session.sendText("Plan the week");
    const turn = await kit.agent.nextTurn();
    turn.activity({ id: "tests", kind: "command", status: "started", title: "npm test" });
    turn.delta("Looking at the board");
    await expect.poll(() => lastChat(view)?.text, { timeout: 2_000 }).toBe("Looking at the board");
    expect(session.getStatus()).toBe("running");

    kit.loseCore();

    await expect(sending).rejects.toMatchObject({ code: "CORE_RUNTIME_UNAVAILABLE" });
    expect(followed.coreLost()?.code).toBe("CORE_RUNTIME_UNAVAILABLE");
    expect(session.getStatus()).toBe("error");
    expect(view.transcript.entries.map((entry) => [entry.role, entry.text, entry.complete])).toEqual([
      ["agent", "Looking at the board", true],
      ["note", CORE_LOST_NOTE, true],
    ]);
    expect([...activities.values()]).toEqual(["stopped"]);
    // One error line for the lost turn, with the remedy the page shows under it.
    expect(errors).toEqual([
      {
        code: "CORE_RUNTIME_UNAVAILABLE",
        message: "the connection to Pedelec Core closed",
        remedy: "Core stopped: your session resumes on the next message. If Core does not come back, run `npx pedelec doctor`.",
      },
    ]);

    kit.restoreCore();
    kit.agent.onTurn((next) => next.complete("Back on it."));
    await session.sendText("Plan the week, please");

    expect(followed.coreLost()).toBeUndefined();
    expect(session.getStatus()).toBe("idle");
    expect(lastChat(view)).toMatchObject({ role: "agent", text: "Back on it.", complete: true });
    // The failed turn was reported once, when Core went away, not again when Core came back.
    expect(errors.map((error) => error.code)).toEqual(["CORE_RUNTIME_UNAVAILABLE"]);
  });

  it("notices a Core lost while idle, keeps saying so while Core is still away, and clears once a message goes through", async () => {
    const { session, followed, view, errors } = await boardSession();
    kit.agent.onTurn((turn) => turn.complete("Done."));
    await session.sendText("Hello");

    kit.loseCore({ how: "stopped" });

    await expect.poll(() => followed.coreLost()?.code, { timeout: 2_000 }).toBe("CORE_RUNTIME_UNAVAILABLE");
    expect(lastChat(view)).toMatchObject({ role: "note", text: CORE_LOST_NOTE });

    // Still away: the next message fails the same way, and the note is not repeated.
    await expect(session.sendText("Are you there?")).rejects.toMatchObject({ code: "CORE_RUNTIME_UNAVAILABLE" });
    expect(followed.coreLost()?.code).toBe("CORE_RUNTIME_UNAVAILABLE");
    expect(view.transcript.entries.filter((entry) => entry.text === CORE_LOST_NOTE)).toHaveLength(1);

    kit.restoreCore();
    await session.sendText("Now?");
    expect(followed.coreLost()).toBeUndefined();
    expect(lastChat(view)).toMatchObject({ role: "agent", text: "Done." });
    expect(errors.every((error) => error.remedy?.startsWith("Core stopped: your session resumes on the next message."))).toBe(true);
  });

  it("shows the provider's own sign-in command under a turn that failed for want of it", async () => {
    const { session, errors } = await boardSession();
    kit.agent.onTurn((turn) => turn.fail("PROVIDER_NOT_AUTHENTICATED", "claude is not signed in", { provider: "claude" }));
    await expect(session.sendText("Hello")).rejects.toMatchObject({ code: "PROVIDER_NOT_AUTHENTICATED" });
    expect(errors).toEqual([
      {
        code: "PROVIDER_NOT_AUTHENTICATED",
        message: "claude is not signed in",
        remedy: "Run `claude auth login` in a terminal (or start `claude` and sign in), then send your message again.",
      },
    ]);
  });
});
