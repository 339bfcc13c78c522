import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * A full collection, so memory figures say what the process still holds rather than what the collector has not reached
 * yet. Works without starting Node with --expose-gc.
 */
export function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

/** The heap in use after a full collection. */
export function heapAfterCollection(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/**
 * Has V8 lay out every string in `value` (keys too) in one piece now. Generated strings are often built of pieces,
 * which V8 joins the first time something reads them whole: without this, a fuzzer's own inputs would grow the heap
 * as they are sent, and hide what the code under test keeps.
 */
export function flattenStrings(value: unknown, seen = new Set<object>()): void {
  if (typeof value === "string") {
    JSON.stringify(value);
    return;
  }
  if (typeof value !== "object" || value === null || seen.has(value) || ArrayBuffer.isView(value)) return;
  seen.add(value);
  for (const [key, entry] of Object.entries(value)) {
    JSON.stringify(key);
    flattenStrings(entry, seen);
  }
}

/**
 * Whether a fuzzer's target keeps memory per message: the heap after a full collection once the first tenth of the
 * messages has warmed everything up (compiled code, caches filled to their bounds), against the heap at the end.
 */
export class HeapGrowth {
  readonly warmUpMessages: number;
  #afterWarmUp: number | undefined;

  constructor(readonly messages: number) {
    this.warmUpMessages = Math.floor(messages / 10);
  }

  /** Call before sending message `index`; measures once, when the warm-up share has been sent. */
  beforeMessage(index: number): void {
    if (index === this.warmUpMessages) this.#afterWarmUp = heapAfterCollection();
  }

  /** The heap after warm-up and now, in bytes, and what it grew by. */
  measure(): { afterWarmUp: number; atEnd: number; growth: number } {
    const atEnd = heapAfterCollection();
    const afterWarmUp = this.#afterWarmUp ?? atEnd;
    return { afterWarmUp, atEnd, growth: atEnd - afterWarmUp };
  }

  describe({ afterWarmUp, atEnd, growth }: ReturnType<HeapGrowth["measure"]>): string {
    const mebibytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
    return (
      `heap after a full collection: ${mebibytes(afterWarmUp)} after the first ${this.warmUpMessages} messages, ` +
      `${mebibytes(atEnd)} after all ${this.messages} (${growth >= 0 ? "+" : ""}${mebibytes(growth)})`
    );
  }
}

/**
 * What a fuzzer's target may keep over the messages after warm-up (compiled code still grows a little): about 350
 * bytes a message over the 9,000 of a CI run. The targets measured 0.7–0.8 MiB here.
 */
export const HEAP_GROWTH_LIMIT_BYTES = 3 * 1024 * 1024;
