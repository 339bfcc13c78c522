/** How many turn ids a session remembers, to recognise a request sent again after a lost link. */
const REMEMBERED_TURN_IDS = 64;

/**
 * The ids of the turns a session started, newest 64. A page whose link broke with sendText in flight cannot know
 * whether it arrived and sends it again under the same turn id; a remembered id starts nothing the second time.
 */
export class StartedTurnIds {
  readonly #ids = new Set<string>();

  remember(turnId: string): void {
    this.#ids.add(turnId);
    if (this.#ids.size <= REMEMBERED_TURN_IDS) return;
    const oldest = this.#ids.values().next().value;
    if (oldest !== undefined) this.#ids.delete(oldest);
  }

  has(turnId: string): boolean {
    return this.#ids.has(turnId);
  }
}
