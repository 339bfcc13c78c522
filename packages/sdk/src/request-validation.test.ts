import { describe, expect, it } from "vitest";
import { validateRequestPayload } from "./request-validation.js";

function createSessionWithPattern(pattern: string) {
  return {
    provider: "claude",
    skills: {
      guidance: "",
      tools: [
        { name: "list_todos", description: "List cards", argsSchema: { type: "object" } },
        { name: "add_todo", description: "Add a card", argsSchema: { type: "object", properties: { title: { type: "string", pattern } } } },
      ],
    },
  };
}

describe("validateRequestPayload: tool patterns", () => {
  it("refuses a pattern that needs backtracking with INVALID_INPUT naming the tool and the field, before anything is sent", () => {
    expect(() => validateRequestPayload("createSession", createSessionWithPattern("(a)\\1"))).toThrowError(
      expect.objectContaining({
        code: "INVALID_INPUT",
        message: expect.stringContaining('tool add_todo: argsSchema.properties.title.pattern "(a)\\\\1" is not supported: back-references') as string,
      }) as Error,
    );
    expect(() => validateRequestPayload("createSession", createSessionWithPattern("^(?<=x)y"))).toThrowError(
      expect.objectContaining({ code: "INVALID_INPUT", message: expect.stringContaining("look-behind assertions") as string }) as Error,
    );
  });

  it("lets linear patterns through, the ones a backtracking engine chokes on included", () => {
    const payload = createSessionWithPattern("^(a+)+$");
    expect(validateRequestPayload("createSession", payload)).toEqual(payload);
  });
});
