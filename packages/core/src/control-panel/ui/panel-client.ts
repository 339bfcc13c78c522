import type { PanelErrorAnswer } from "../control-panel-wire.js";

/** A refusal from the panel's API, with Core's code and message. */
export class PanelRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The API lives under the page's own folder: `/panel/` (signed in with the session cookie) or the secret's folder; the
 * page never writes either anywhere.
 */
function apiUrl(path: string): string {
  return new URL(`api/${path}`, location.href).href;
}

/** One API call; a refusal rejects with PanelRequestError. */
export async function callPanel<T>(path: string, init: { method?: "GET" | "POST" | "PUT"; body?: unknown } = {}): Promise<T> {
  const response = await fetch(apiUrl(path), {
    method: init.method ?? "GET",
    headers: init.body === undefined ? {} : { "Content-Type": "application/json" },
    body: init.body === undefined ? null : JSON.stringify(init.body),
    cache: "no-store",
    // The session cookie (HttpOnly, SameSite=Strict) goes to the panel's own origin only.
    credentials: "same-origin",
  });
  const text = await response.text();
  if (!response.ok) {
    let answer: PanelErrorAnswer | undefined;
    try {
      answer = JSON.parse(text) as PanelErrorAnswer;
    } catch {
      answer = undefined;
    }
    throw new PanelRequestError(answer?.error.code ?? `HTTP_${response.status}`, answer?.error.message ?? `the panel answered ${response.status}`);
  }
  return JSON.parse(text) as T;
}

/** The Live events stream (Server-Sent Events) at its address under the page's folder. */
export function openEventStream(): EventSource {
  return new EventSource(apiUrl("events"));
}
