/**
 * `text` without the excerpt of the source V8 quotes in a JSON syntax error (`Unexpected token 's', ..."apiKey":
 * sk-abcdefg"... is not valid JSON`): the excerpt of a broken settings.json can hold the start of a secret. The token
 * and position are enough to find the mistake.
 */
export function withoutJsonExcerpt(text: string): string {
  return text.replace(/(Unexpected token .+?), .* is not valid JSON/s, "$1 (excerpt left out) in the JSON");
}
