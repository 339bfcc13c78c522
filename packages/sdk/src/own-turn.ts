import type { TurnKind } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

/** A turn a session handle started (sendText or prepare); turns started elsewhere are only reported. */
export interface OwnTurn {
  readonly turnId: string;
  readonly kind: TurnKind;
  /** True once the caller's promise is settled while Core may still be running the turn (its signal aborted). */
  settled: boolean;
  /** Its request has left and no answer has come yet: a lost link then leaves the request to be sent again. */
  awaitingAnswer: boolean;
  /** A link broke while the request awaited its answer; if the answer then comes anyway, the turn is lost with it. */
  linkLostMeanwhile?: PedelecError;
  /**
   * The request failed with a broken link and went again: the notice of that break may still arrive, and changes
   * nothing, as the request sent again answers for itself.
   */
  sentAgain: boolean;
  readonly resolve: () => void;
  readonly reject: (error: PedelecError) => void;
}

/** A new turn of the handle and the promise its caller gets: a prepare turn's failures become PREPARE_FAILED. */
export function createOwnTurn(kind: TurnKind, turnId: string): { turn: OwnTurn; completion: Promise<void> } {
  let turn!: OwnTurn;
  const completion = new Promise<void>((resolve, reject) => {
    turn = {
      turnId,
      kind,
      settled: false,
      awaitingAnswer: true,
      sentAgain: false,
      resolve,
      reject: kind === "prepare" ? (error) => reject(prepareFailure(error)) : reject,
    };
  });
  return { turn, completion };
}

/** Settles the caller's promise: resolves without `error`, rejects with it; once settled, nothing changes it. */
export function settleOwnTurn(turn: OwnTurn, error?: PedelecError): void {
  if (turn.settled) return;
  turn.settled = true;
  if (error === undefined) turn.resolve();
  else turn.reject(error);
}

/** A prepare() that did not get its turn done: busy and ended keep their codes, anything else is PREPARE_FAILED. */
function prepareFailure(error: PedelecError): PedelecError {
  if (error.code === "SESSION_BUSY" || error.code === "SESSION_ENDED" || error.code === "PREPARE_FAILED") return error;
  return new PedelecError("PREPARE_FAILED", `The session could not be prepared: ${error.message}`, { cause: error.toWire() });
}
