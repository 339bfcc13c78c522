import { log } from "./logger.js";

/** Takes back what a start-up step set up. A failing undo is ignored: the undos after it still run. */
export type StartUpUndo = () => Promise<void> | void;

/** What a start-up step made, and how to take it back should start-up not finish. */
export interface StartedStep<Made> {
  made: Made;
  /** Absent when the step set up nothing that outlives a failed start-up. */
  undo?: StartUpUndo;
}

/** One step of Core's start-up: takes what earlier steps made, returns what it made with its undo. */
export type StartUpStep<Input, Made> = (input: Input) => StartedStep<Made> | Promise<StartedStep<Made>>;

/**
 * Core's start-up as it runs: the steps in order, each one's undo kept, and the stop signal checked after each. When a
 * step throws, or the signal has stopped start-up, every undo kept so far runs, last first.
 */
export class StartUp {
  readonly #signal: AbortSignal | undefined;
  readonly #undos: StartUpUndo[] = [];

  constructor(signal: AbortSignal | undefined) {
    this.#signal = signal;
  }

  /** Runs `step` on `input`, keeps its undo, then checks the stop signal; resolves to what the step made. */
  async step<Input, Made>(step: StartUpStep<Input, Made>, input: Input): Promise<Made> {
    const { made, undo } = await step(input);
    if (undo !== undefined) this.#undos.push(undo);
    await this.checkpoint();
    return made;
  }

  /** When the signal has stopped start-up: undoes every step so far, logs it, and throws the signal's reason. */
  async checkpoint(): Promise<void> {
    const signal = this.#signal;
    if (!signal?.aborted) return;
    await this.undoAll();
    log("info", "Core start-up stopped");
    throw signal.reason;
  }

  /** Runs every undo kept so far, last first, and forgets them. */
  async undoAll(): Promise<void> {
    for (let undo = this.#undos.pop(); undo !== undefined; undo = this.#undos.pop()) {
      await runQuietly(undo);
    }
  }

  /** Forgets every undo: what start-up made now belongs to whoever stops what it started. */
  handOver(): void {
    this.#undos.length = 0;
  }
}

/**
 * For a step that sets something up and then does more with it: runs `rest`, and when it throws, runs `undo` (whose own
 * failure is ignored) before throwing on, as start-up would have had the step finished.
 */
export async function undoneOnFailure<Made>(undo: StartUpUndo, rest: () => Made | Promise<Made>): Promise<StartedStep<Made>> {
  try {
    return { made: await rest(), undo };
  } catch (error) {
    await runQuietly(undo);
    throw error;
  }
}

/** Runs an undo, ignoring how it fails. */
async function runQuietly(undo: StartUpUndo): Promise<void> {
  await Promise.resolve()
    .then(undo)
    .catch(() => undefined);
}

/**
 * Runs a start-up plan: checks the signal first, then runs `plan`, which calls `startUp.step` for each step. When the
 * plan throws (a step failed, or the signal stopped start-up), what it set up is undone, last first, and the error is
 * thrown on. When it returns, what it made is handed over, no longer undone by start-up.
 */
export async function runStartUp<Result>(signal: AbortSignal | undefined, plan: (startUp: StartUp) => Promise<Result>): Promise<Result> {
  const startUp = new StartUp(signal);
  try {
    await startUp.checkpoint();
    const result = await plan(startUp);
    startUp.handOver();
    return result;
  } catch (error) {
    await startUp.undoAll();
    throw error;
  }
}
