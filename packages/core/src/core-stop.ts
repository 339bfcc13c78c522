import { log } from "./logger.js";

/** Stops Core once, however many ask: a shutdown request, the start signal, or RunningCore.stop(). */
export class CoreStop {
  /** Resolves once Core has stopped. */
  readonly stopped: Promise<void>;
  readonly #markStopped: () => void;
  readonly #close: () => Promise<void>;
  #stopping: Promise<void> | undefined;

  /** `close` takes down what Core runs, in order; it runs on the first stop() only. */
  constructor(close: () => Promise<void>) {
    let markStopped: () => void = () => undefined;
    this.stopped = new Promise<void>((resolve) => (markStopped = resolve));
    this.#markStopped = markStopped;
    this.#close = close;
  }

  /** Logs "Core stopping", closes what Core runs, logs "Core stopped"; every call gets the same promise. */
  stop(): Promise<void> {
    this.#stopping ??= this.#run();
    return this.#stopping;
  }

  async #run(): Promise<void> {
    log("info", "Core stopping");
    await this.#close();
    log("info", "Core stopped");
    this.#markStopped();
  }
}
