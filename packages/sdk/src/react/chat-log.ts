import type { Activity } from "../types.js";
import type { SessionChatMessage } from "./types.js";

/**
 * Pure updates of the hook's conversation and activity lists. Each returns a new array (what React compares) and
 * leaves the old one alone.
 */

/** Adds a streamed piece to the assistant message `id`, starting the message when it is new. */
export function withDelta(messages: readonly SessionChatMessage[], id: string, delta: string): readonly SessionChatMessage[] {
  const index = messages.findLastIndex((message) => message.id === id && message.role === "assistant");
  if (index < 0) return [...messages, { id, role: "assistant", text: delta, complete: false }];
  const message = messages[index]!;
  // A piece that comes after the completed message (a replay) changes nothing.
  if (message.complete) return messages;
  return replaceAt(messages, index, { ...message, text: message.text + delta });
}

/** The completed assistant message `id` replaces its streamed pieces (or is added, when none came). */
export function withCompleted(messages: readonly SessionChatMessage[], id: string, text: string): readonly SessionChatMessage[] {
  const completed: SessionChatMessage = { id, role: "assistant", text, complete: true };
  const index = messages.findLastIndex((message) => message.id === id && message.role === "assistant");
  if (index < 0) return [...messages, completed];
  return replaceAt(messages, index, completed);
}

/** Adds a user message. */
export function withUserMessage(messages: readonly SessionChatMessage[], id: string, text: string): readonly SessionChatMessage[] {
  return [...messages, { id, role: "user", text, complete: true }];
}

/** Removes the message `id` (a user message the session refused before it was sent). */
export function without(messages: readonly SessionChatMessage[], id: string): readonly SessionChatMessage[] {
  const index = messages.findIndex((message) => message.id === id);
  return index < 0 ? messages : [...messages.slice(0, index), ...messages.slice(index + 1)];
}

/** An activity update: replaces the activity with the same id in place, or adds it at the end. */
export function withActivity(activities: readonly Activity[], activity: Activity): readonly Activity[] {
  const index = activities.findIndex((known) => known.id === activity.id);
  if (index < 0) return [...activities, activity];
  return replaceAt(activities, index, activity);
}

function replaceAt<T>(items: readonly T[], index: number, item: T): readonly T[] {
  const copy = [...items];
  copy[index] = item;
  return copy;
}
