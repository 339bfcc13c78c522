import { Pedelec } from "../pedelec.js";
import type { PedelecOptions } from "../types.js";

/**
 * Where a `PedelecProvider` keeps its client, read with `useSyncExternalStore`. A given client is there from the
 * start. Otherwise one is made on the first `ensure()`, which only effects call: a `Pedelec` opens its extension port
 * when constructed, so making it during render would open a port for every render React throws away (Strict Mode
 * renders twice) and one on the server.
 */
export class ClientStore {
  #client: Pedelec | null;
  readonly #options: PedelecOptions | undefined;
  readonly #listeners = new Set<() => void>();

  constructor(client: Pedelec | undefined, options: PedelecOptions | undefined) {
    this.#client = client ?? null;
    this.#options = options;
  }

  /** The client, or null while none was made yet. */
  readonly get = (): Pedelec | null => this.#client;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  /** The client, made now if needed. Call it from effects and event handlers only, never during render. */
  ensure(): Pedelec {
    if (this.#client !== null) return this.#client;
    const client = new Pedelec(this.#options);
    this.#client = client;
    for (const listener of [...this.#listeners]) listener();
    return client;
  }
}
