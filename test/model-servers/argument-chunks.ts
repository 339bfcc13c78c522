/** The JSON text of a tool call's input, cut into three pieces, as models stream arguments. */
export function argumentChunks(input: Record<string, unknown>): string[] {
  const json = JSON.stringify(input);
  const third = Math.ceil(json.length / 3);
  return [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)].filter((chunk) => chunk !== "");
}
