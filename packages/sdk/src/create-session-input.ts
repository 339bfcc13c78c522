import type { PageRequestPayload } from "@pedelec/protocol/page-wire";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { skillsManifestSchema } from "@pedelec/protocol/tool-schema";
import { validateRequestPayload } from "./request-validation.js";
import { splitTools, withoutUndefined, type PageTools } from "./tool-schema/page-tools.js";

export interface PreparedCreateSession extends PageTools {
  /** The checked createSession payload: the manifest without handlers, Standard Schemas converted to argsSchema. */
  readonly payload: PageRequestPayload<"createSession">;
}

/**
 * Splits `createSession()` input into what goes to Core and what stays in the page (handlers, argument checks), and
 * checks it against the protocol schema (INVALID_INPUT with the schema issues, before any round trip). Plain
 * JavaScript callers can pass anything, so nothing about the shape is assumed.
 */
export function prepareCreateSession(input: unknown): PreparedCreateSession {
  let pageTools: PageTools = { inlineHandlers: new Map(), argsValidators: new Map() };
  let payload = input ?? {};
  if (typeof payload === "object" && !Array.isArray(payload)) {
    const { skills, ...options } = withoutUndefined(payload as Record<string, unknown>);
    if (skills === undefined) {
      payload = options;
    } else {
      const split = splitSkills(skills);
      pageTools = split.pageTools;
      payload = { ...options, skills: split.skills };
    }
  }
  return {
    payload: validateRequestPayload("createSession", payload),
    ...pageTools,
  };
}

/**
 * The page's side of the tools given to `resumeSession()`: their handlers and argument checks. Nothing is sent, so
 * the tools are checked here against the same rules createSession applies.
 */
export function prepareResumeTools(tools: unknown): PageTools {
  if (tools === undefined) return { inlineHandlers: new Map(), argsValidators: new Map() };
  if (!Array.isArray(tools)) throw new PedelecError("INVALID_INPUT", "resumeSession: tools must be a list of tool definitions");
  const { manifest, ...pageTools } = splitTools(tools, "tools");
  const parsed = skillsManifestSchema.safeParse({ guidance: "", tools: manifest });
  if (!parsed.success) {
    const summary = summarizeIssues(parsed.error.issues);
    throw new PedelecError("INVALID_INPUT", `Invalid resumeSession tools: ${summary.message}`, summary.details);
  }
  return pageTools;
}

function splitSkills(skills: unknown): { skills: unknown; pageTools: PageTools } {
  const none: PageTools = { inlineHandlers: new Map(), argsValidators: new Map() };
  if (typeof skills !== "object" || skills === null) return { skills, pageTools: none };
  const { tools, ...rest } = skills as Record<string, unknown>;
  if (!Array.isArray(tools)) return { skills, pageTools: none };
  const { manifest, ...pageTools } = splitTools(tools, "skills.tools");
  return { skills: { ...rest, tools: manifest }, pageTools };
}
