import { expect, it } from "vitest";
import { withoutJsonExcerpt } from "./json-error-excerpt.js";

function parseError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the text parsed");
}

it("leaves out the excerpt V8 quotes from broken JSON, and keeps every other message as it is", () => {
  const message = `/home/user/.pedelec/settings.json is not valid JSON: ${parseError('{ "ollama": { "apiKey": sk-abcdefghijklmnopqrstuvwxyz } }')}`;
  expect(message).toContain("sk-abcdefg");
  const scrubbed = withoutJsonExcerpt(`${message}; keeping the last good settings`);
  expect(scrubbed).not.toContain("sk-");
  expect(scrubbed).toBe(
    "/home/user/.pedelec/settings.json is not valid JSON: Unexpected token 's' (excerpt left out) in the JSON; keeping the last good settings",
  );
  const positional = `settings.json is not valid JSON: ${parseError('{ "a": 1, }')}`;
  expect(withoutJsonExcerpt(positional)).toBe(positional);
  expect(withoutJsonExcerpt("settings.json is invalid: defaultProvider: Invalid option")).toBe(
    "settings.json is invalid: defaultProvider: Invalid option",
  );
});
