import type { ReactNode } from "react";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  defineTool,
  type Activity,
  type Pedelec,
  type PedelecError,
  type PedelecSession,
  type SendTextOptions,
  type SessionStatus,
  type TokenUsage,
} from "../index.js";
import {
  PedelecProvider,
  usePedelec,
  usePedelecSession,
  useTool,
  type PedelecProviderProps,
  type PedelecSessionHookStatus,
  type SendOutcome,
  type SessionChatMessage,
  type UsePedelecSessionOptions,
  type UsePedelecSessionResult,
} from "./index.js";

const addNote = defineTool({
  name: "add_note",
  description: "Add a note.",
  argsSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
});
const tagNote = defineTool({
  name: "tag_note",
  description: "Tag a note.",
  args: z.object({ id: z.string(), tags: z.array(z.string()).max(5) }),
});
const listNotes = defineTool({
  name: "list_notes",
  description: "List the notes.",
  argsSchema: { type: "object", properties: {} },
});

describe("usePedelecSession", () => {
  it("returns the session typed by the declared tools, and plain state", () => {
    const result = usePedelecSession({ provider: "claude", skills: { guidance: "", tools: [addNote, listNotes] } });
    type Args = { add_note: unknown; list_notes: unknown };
    expectTypeOf(result).toEqualTypeOf<UsePedelecSessionResult<"add_note" | "list_notes", Args>>();
    expectTypeOf(result.session).toEqualTypeOf<PedelecSession<"add_note" | "list_notes", Args> | null>();
    expectTypeOf(result.status).toEqualTypeOf<PedelecSessionHookStatus>();
    expectTypeOf(result.messages).toEqualTypeOf<readonly SessionChatMessage[]>();
    expectTypeOf(result.activity).toEqualTypeOf<readonly Activity[]>();
    expectTypeOf(result.usage).toEqualTypeOf<TokenUsage>();
    expectTypeOf(result.error).toEqualTypeOf<PedelecError | null>();
    expectTypeOf(result.send).toEqualTypeOf<(text: string, options?: SendTextOptions) => Promise<SendOutcome>>();
    expectTypeOf(result.cancel).toEqualTypeOf<() => Promise<void>>();
  });

  it("has a session without tool names when no tools are declared", () => {
    expectTypeOf(usePedelecSession().session).toEqualTypeOf<PedelecSession<never, Record<never, unknown>> | null>();
  });

  it("reports the session's statuses plus inactive and connecting", () => {
    expectTypeOf<PedelecSessionHookStatus>().toEqualTypeOf<SessionStatus | "inactive" | "connecting">();
  });

  it("describes chat messages and send outcomes", () => {
    expectTypeOf<SessionChatMessage>().toEqualTypeOf<{
      readonly id: string;
      readonly role: "user" | "assistant";
      readonly text: string;
      readonly complete: boolean;
    }>();
    expectTypeOf<SendOutcome>().toEqualTypeOf<{ readonly ok: true } | { readonly ok: false; readonly error: PedelecError }>();
  });

  it("takes the createSession options plus enabled, and keeps a model without a provider a type error", () => {
    expectTypeOf<{ enabled: false; effortLevel: "low" }>().toExtend<UsePedelecSessionOptions>();
    // @ts-expect-error -- a model needs an explicit provider, as in createSession()
    usePedelecSession({ model: "sonnet" });
    // @ts-expect-error -- enabled is a boolean
    usePedelecSession({ enabled: "yes" });
  });
});

describe("useTool", () => {
  const session = null as PedelecSession<"add_note" | "list_notes"> | null;

  it("takes the session's declared tool names only", () => {
    useTool(session, "add_note", (args, context) => {
      expectTypeOf(context.toolName).toEqualTypeOf<"add_note">();
      expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>();
      expectTypeOf(args).toBeUnknown();
      return { saved: true };
    });
    // @ts-expect-error -- not a declared tool of this session
    useTool(session, "remove_note", () => null);
    expectTypeOf(useTool(session, "list_notes", () => [])).toEqualTypeOf<void>();
  });

  it("accepts the session straight from usePedelecSession, with each tool's arguments typed from its schema", () => {
    const { session: fromHook } = usePedelecSession({ skills: { guidance: "", tools: [addNote, tagNote] } });
    useTool(fromHook, "add_note", (args) => {
      expectTypeOf(args).toBeUnknown();
      return { ok: true };
    });
    useTool(fromHook, "tag_note", (args, context) => {
      expectTypeOf(args).toEqualTypeOf<{ id: string; tags: string[] }>();
      expectTypeOf(context.toolName).toEqualTypeOf<"tag_note">();
      return { tagged: args.tags.length };
    });
    // @ts-expect-error -- list_notes is not declared in this session
    useTool(fromHook, "list_notes", () => []);
    // @ts-expect-error -- the handler's arguments are the schema's output, not any other shape
    useTool(fromHook, "tag_note", (args: { id: number }) => args.id);
  });

  it("runs skills.tools' inline handlers with the schema's output type", () => {
    usePedelecSession({
      skills: {
        guidance: "",
        tools: [
          defineTool({
            name: "rename_note",
            description: "Rename a note.",
            args: z.object({ id: z.string(), title: z.string().min(1) }),
            handler: (args) => {
              expectTypeOf(args).toEqualTypeOf<{ id: string; title: string }>();
              return { renamed: args.id };
            },
          }),
        ],
      },
    });
  });
});

describe("PedelecProvider and usePedelec", () => {
  it("takes an optional client and options, and usePedelec may be null", () => {
    expectTypeOf<PedelecProviderProps>().toEqualTypeOf<{
      client?: Pedelec;
      options?: import("../index.js").PedelecOptions;
      children?: ReactNode;
    }>();
    expectTypeOf(PedelecProvider).parameter(0).toEqualTypeOf<PedelecProviderProps>();
    expectTypeOf(usePedelec()).toEqualTypeOf<Pedelec | null>();
  });
});
