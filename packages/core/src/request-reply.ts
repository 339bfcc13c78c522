import type { CoreRequestFrame } from "@pedelec/protocol/core-request-frame";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import * as z from "@pedelec/protocol/lean-zod";
import type { CoreClientConnection } from "./core-connection.js";

/**
 * A handler's answer plus what must follow the reply on the same connection, in the same tick: a resuming page gets its
 * answer first, then the events it missed, then live ones, with nothing interleaved.
 */
export class AnswerThen<T> {
  constructor(
    readonly result: T,
    readonly afterReply: () => void,
  ) {}
}

/**
 * The request's payload as its schema (a classic zod schema or a lean-zod one) reads it, or INVALID_INPUT naming what
 * is wrong.
 */
export function checkedPayload<S extends z.core.$ZodType>(schema: S, type: string, payload: unknown): z.infer<S> {
  const parsed = z.safeParse(schema, payload);
  if (parsed.success) return parsed.data;
  const summary = summarizeIssues(parsed.error.issues);
  throw new PedelecError("INVALID_INPUT", `invalid ${type} request: ${summary.message}`, summary.details);
}

/** Sends the answer `run` gives (and what must follow it), or its failure as a coded error response. */
export function reply(connection: CoreClientConnection, frame: CoreRequestFrame, run: () => Promise<unknown>): void {
  run().then(
    (answer) => {
      if (!(answer instanceof AnswerThen)) {
        connection.send({ kind: "response", id: frame.id, ok: true, result: answer });
        return;
      }
      connection.send({ kind: "response", id: frame.id, ok: true, result: answer.result });
      answer.afterReply();
    },
    (error: unknown) => {
      const coded = PedelecError.from(error, "SESSION_ERROR");
      connection.send({ kind: "response", id: frame.id, ok: false, error: coded.toWire() });
    },
  );
}
