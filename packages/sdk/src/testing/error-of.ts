import { expect } from "vitest";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/** The PedelecError a promise rejects with (fails the test if it resolves or rejects with anything else). */
export async function errorOf(promise: Promise<unknown>): Promise<PedelecError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(PedelecError);
    return error as PedelecError;
  }
  throw new Error("expected a rejection");
}
