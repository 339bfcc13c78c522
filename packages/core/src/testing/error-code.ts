/** The code an operation failed with, or "accepted" when it did not fail. */
export async function codeOf(attempt: Promise<unknown>): Promise<string> {
  try {
    await attempt;
  } catch (error) {
    return (error as { code: string }).code;
  }
  return "accepted";
}
