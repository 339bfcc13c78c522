import {
  DEFAULT_EXTENSION_ID,
  Pedelec,
  PedelecError,
  type EffortLevel,
  type PedelecSession,
  type ProviderCode,
  type SessionStatus,
} from "@kaoruisaac/pedelec";
import { ActivityLog } from "./activity-view.js";
import { describeApproval } from "./approval-text.js";
import { mountBoard } from "./board-view.js";
import { ChatTranscript } from "./chat-transcript.js";
import { mountChat } from "./chat-view.js";
import { controlsState, statusLabel } from "./controls-state.js";
import { requireElement } from "./dom.js";
import { showError } from "./errors-view.js";
import { readPageOptions } from "./page-options.js";
import { preferredChoice, providerChoices, type ProviderChoice } from "./provider-choices.js";
import { followSession, type FollowedSession } from "./session-follow.js";
import { summarizeToolCall } from "./tool-call-summary.js";
import { createTodoStore } from "./todo-store.js";
import { createTodoTools, TODO_BOARD_GUIDANCE } from "./todo-tools.js";

const PROVIDERS = ["claude", "codex", "opencode", "cursor", "antigravity", "ollama"] as const satisfies readonly ProviderCode[];
const EFFORT_LEVELS = ["low", "medium", "high"] as const satisfies readonly EffortLevel[];

const connectButton = requireElement("connect", HTMLButtonElement);
const providerSelect = requireElement("provider", HTMLSelectElement);
const effortSelect = requireElement("effort", HTMLSelectElement);
const messageBox = requireElement("message", HTMLTextAreaElement);
const sendButton = requireElement("send", HTMLButtonElement);
const endButton = requireElement("end", HTMLButtonElement);
const statusElement = requireElement("status", HTMLElement);
const approvalElement = requireElement("approval", HTMLElement);
const approvalHintElement = requireElement("approval-hint", HTMLElement);
const messagesElement = requireElement("messages", HTMLElement);
const errorsElement = requireElement("errors", HTMLElement);
const boardElement = requireElement("board", HTMLElement);
const activityElement = requireElement("activity", HTMLElement);
const composerForm = requireElement("composer", HTMLFormElement);
const providerReasonsElement = requireElement("provider-reasons", HTMLElement);

const pageOptions = readPageOptions(location.search);
const extensionId = pageOptions.extensionId ?? DEFAULT_EXTENSION_ID;
const pedelec = new Pedelec(pageOptions.extensionId === undefined ? {} : { extensionId: pageOptions.extensionId });

const store = createTodoStore([
  { title: "Sketch the board layout", column: "done" },
  { title: "Wire up the chat pane", column: "doing" },
  { title: "Write the release notes", column: "todo" },
  { title: "Ask the agent to plan the week", column: "todo" },
]);
const transcript = new ChatTranscript();
const activityLog = new ActivityLog(activityElement);
const tools = createTodoTools(store, (call) => activityLog.toolCall(summarizeToolCall(call), call.ok));

mountBoard(boardElement, store);
mountChat(messagesElement, transcript);

/** The page's state beyond the DOM: which session is current and what is in flight. */
const state: {
  session: PedelecSession<(typeof tools)[number]["name"]> | undefined;
  /** The current session's listeners; detached when it is replaced, so its late callbacks go nowhere. */
  followed: FollowedSession | undefined;
  connecting: boolean;
  ending: boolean;
  /** A sendText() has not settled yet. */
  sending: boolean;
} = { session: undefined, followed: undefined, connecting: false, ending: false, sending: false };

function currentStatus(): SessionStatus | undefined {
  return state.session?.getStatus();
}

function renderStatus(): void {
  const status = currentStatus();
  const coreLost = state.followed?.coreLost() !== undefined;
  const text = statusLabel({ connecting: state.connecting, status, coreLost });
  statusElement.textContent = text;
  statusElement.dataset.status = text;
  const controls = controlsState({ connecting: state.connecting, status, ending: state.ending, sending: state.sending, coreLost });
  connectButton.disabled = !controls.connect;
  providerSelect.disabled = !controls.sessionOptions;
  effortSelect.disabled = !controls.sessionOptions;
  sendButton.disabled = !controls.send;
  endButton.disabled = !controls.end;
}

/** The SDK hands the same error to onError and to a rejected sendText(); show each one once. */
const shownErrors = new WeakSet<object>();

function reportError(error: unknown): void {
  if (typeof error === "object" && error !== null) {
    if (shownErrors.has(error)) return;
    shownErrors.add(error);
  }
  showError(errorsElement, error);
}

async function refreshApproval(): Promise<void> {
  try {
    const status = await pedelec.getApprovalStatus();
    const { text, hint } = describeApproval(status, extensionId);
    approvalElement.textContent = text;
    approvalElement.dataset.installed = String(status.installed);
    approvalElement.dataset.approved = String(status.approved);
    approvalHintElement.textContent = hint;
    approvalHintElement.hidden = hint === "";
    if (status.approved) await refreshProviders();
  } catch (error) {
    approvalElement.textContent = "Approval status unknown";
    reportError(error);
  }
}

/**
 * Shows which providers this machine can run and why the others cannot. Pedelec answers only approved sites, so before
 * approval the picker keeps its plain list.
 */
async function refreshProviders(): Promise<void> {
  let choices: ProviderChoice[];
  try {
    choices = providerChoices(await pedelec.listProviders());
  } catch (error) {
    if (error instanceof PedelecError && error.code === "CREATE_SESSION_NOT_APPROVED") return;
    reportError(error);
    return;
  }
  const current = providerSelect.value;
  providerSelect.replaceChildren(
    ...choices.map((choice) => {
      const option = new Option(choice.label, choice.value);
      option.disabled = !choice.available;
      option.dataset.available = String(choice.available);
      if (choice.reason !== "") option.title = choice.reason;
      return option;
    }),
  );
  providerSelect.value = preferredChoice(choices, current) ?? current;
  providerReasonsElement.replaceChildren(
    ...choices
      .filter((choice) => !choice.available)
      .map((choice) => {
        const item = document.createElement("li");
        item.dataset.provider = choice.value;
        item.textContent = choice.reason;
        return item;
      }),
  );
  providerReasonsElement.hidden = providerReasonsElement.childElementCount === 0;
}

function selectedProvider(): ProviderCode {
  return PROVIDERS.find((provider) => provider === providerSelect.value) ?? "claude";
}

function selectedEffort(): EffortLevel {
  return EFFORT_LEVELS.find((level) => level === effortSelect.value) ?? "medium";
}

async function connect(): Promise<void> {
  if (state.connecting) return;
  state.followed?.detach();
  state.followed = undefined;
  state.connecting = true;
  renderStatus();
  try {
    const session = await pedelec.createSession({
      provider: selectedProvider(),
      effortLevel: selectedEffort(),
      skills: { guidance: TODO_BOARD_GUIDANCE, tools },
    });
    state.session = session;
    state.followed = followSession(session, {
      transcript,
      showActivity: (key, activity) => activityLog.show(key, activity),
      stopOpenActivities: () => activityLog.stopOpen(),
      reportError,
      statusChanged: renderStatus,
    });
    transcript.addNote(`Connected to ${session.provider} (${session.effortLevel} effort).`);
  } catch (error) {
    reportError(error);
  } finally {
    state.connecting = false;
    renderStatus();
  }
  // Creating a session may just have approved this origin.
  await refreshApproval();
}

async function send(): Promise<void> {
  const session = state.session;
  const text = messageBox.value.trim();
  if (session === undefined || text === "" || sendButton.disabled) return;
  transcript.addUserMessage(text);
  messageBox.value = "";
  const turn = session.sendText(text);
  // Core's "running" arrives a moment later; Send is held back from now on.
  state.sending = true;
  renderStatus();
  try {
    await turn;
  } catch (error) {
    // SESSION_ENDED once the session is over (End pressed, Core shut down) is already shown by onEnded.
    const endedAlready = error instanceof PedelecError && error.code === "SESSION_ENDED" && session.getStatus() === "ended";
    if (state.session === session && !endedAlready) reportError(error);
  } finally {
    state.sending = false;
    if (state.session === session) {
      transcript.closeOpenMessage();
      renderStatus();
    }
  }
}

async function end(): Promise<void> {
  const session = state.session;
  if (session === undefined || state.ending) return;
  state.ending = true;
  renderStatus();
  try {
    await session.end();
  } catch (error) {
    reportError(error);
  } finally {
    state.ending = false;
    renderStatus();
  }
}

connectButton.addEventListener("click", () => void connect());
endButton.addEventListener("click", () => void end());
composerForm.addEventListener("submit", (event) => {
  event.preventDefault();
  void send();
});
messageBox.addEventListener("keydown", (event) => {
  // Enter sends, Shift+Enter adds a line (and an IME composition is left alone).
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    void send();
  }
});

if (pageOptions.problem !== undefined) reportError(new Error(pageOptions.problem));
renderStatus();
void refreshApproval();
