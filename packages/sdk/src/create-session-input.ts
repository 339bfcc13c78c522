import type { PageRequestPayload } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { validateRequestPayload } from "./request-validation.js";
import type { ToolHandler } from "./types.js";

export interface PreparedCreateSession {
  /** The checked createSession payload: the manifest without handlers. */
  readonly payload: PageRequestPayload<"createSession">;
  /** Inline handlers by tool name; they never leave the page. */
  readonly inlineHandlers: ReadonlyMap<string, ToolHandler>;
}

/**
 * Splits `createSession()` input into what goes to Core and what stays in the page, and checks it against
 * the protocol schema (INVALID_INPUT with the schema issues, before any round trip). Plain JavaScript callers
 * can pass anything, so nothing about the shape is assumed.
 */
export function prepareCreateSession(input: unknown): PreparedCreateSession {
  const inlineHandlers = new Map<string, ToolHandler>();
  let payload = input ?? {};
  if (typeof payload === "object" && !Array.isArray(payload)) {
    const { skills, ...options } = withoutUndefined(payload as Record<string, unknown>);
    payload = skills === undefined ? options : { ...options, skills: stripHandlers(skills, inlineHandlers) };
  }
  return {
    payload: validateRequestPayload("createSession", payload) as PageRequestPayload<"createSession">,
    inlineHandlers,
  };
}

function stripHandlers(skills: unknown, inlineHandlers: Map<string, ToolHandler>): unknown {
  if (typeof skills !== "object" || skills === null) return skills;
  const { tools, ...rest } = skills as Record<string, unknown>;
  if (!Array.isArray(tools)) return skills;
  const manifest = tools.map((tool: unknown, index) => {
    if (typeof tool !== "object" || tool === null) return tool;
    const { handler, ...entry } = tool as Record<string, unknown>;
    if (handler !== undefined && typeof handler !== "function") {
      throw new PedelecError("INVALID_INPUT", `skills.tools[${index}].handler must be a function`);
    }
    if (typeof handler === "function" && typeof entry.name === "string") {
      inlineHandlers.set(entry.name, handler as ToolHandler);
    }
    return withoutUndefined(entry);
  });
  return { ...rest, tools: manifest };
}

// Optional fields left undefined are dropped, so the strict schema and the wire see only what was set.
function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
