import type { TokenUsage } from "@pedelec/protocol/token-usage";
import type { ProviderEvent } from "../provider-adapter.js";
import type { ClaudeUsage } from "./claude-stream-schema.js";

type UsageField = keyof ClaudeUsage;
const USAGE_FIELDS: readonly UsageField[] = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"];

/**
 * Adds up the tokens of one Claude Code run for the turn's usage report. Each model request (one message id) reports
 * its usage several times as it streams (`message_start`, each `assistant` line, `message_delta`), every count only
 * growing, so a message keeps the largest count seen; the turn is the sum of its messages until the `result` line
 * gives the run's own total, which then stands.
 *
 * Anthropic counts input in three disjoint parts: `input_tokens` (neither from nor into the cache),
 * `cache_creation_input_tokens` (written to the cache) and `cache_read_input_tokens` (served from it). All three were
 * sent to the model, so all three count as input, cache creation included; the cache reads are also `cachedInputTokens`.
 */
export class ClaudeUsageTally {
  readonly #messages = new Map<string, ClaudeUsage>();
  #runTotal: ClaudeUsage | null = null;
  #reported: TokenUsage | null = null;
  /** Something was noted since the last report (most lines carry no usage, and they cost nothing here). */
  #changed = false;

  /** A message's usage so far. */
  noteMessage(messageId: string, usage: ClaudeUsage | undefined): void {
    if (usage === undefined || this.#runTotal !== null) return;
    const kept = this.#messages.get(messageId) ?? {};
    for (const field of USAGE_FIELDS) {
      const count = usage[field];
      if (count !== undefined) kept[field] = Math.max(kept[field] ?? 0, count);
    }
    this.#messages.set(messageId, kept);
    this.#changed = true;
  }

  /** The run's total from its `result` line. */
  noteRunTotal(usage: ClaudeUsage | undefined): void {
    if (usage === undefined) return;
    this.#runTotal = usage;
    this.#changed = true;
  }

  /** Pushes a usage event when the turn's total changed since the last one. */
  report(events: ProviderEvent[]): void {
    if (!this.#changed) return;
    this.#changed = false;
    const usage = this.#current();
    if (usage === null || Object.keys(usage).length === 0 || sameUsage(usage, this.#reported)) return;
    this.#reported = usage;
    events.push({ type: "usage", usage });
  }

  /** The last usage reported, null before the first. */
  get reported(): TokenUsage | null {
    return this.#reported;
  }

  #current(): TokenUsage | null {
    if (this.#runTotal !== null) return toTokenUsage(this.#runTotal);
    if (this.#messages.size === 0) return null;
    const sum: ClaudeUsage = {};
    for (const usage of this.#messages.values()) {
      for (const field of USAGE_FIELDS) {
        const count = usage[field];
        if (count !== undefined) sum[field] = (sum[field] ?? 0) + count;
      }
    }
    return toTokenUsage(sum);
  }
}

function toTokenUsage(usage: ClaudeUsage): TokenUsage {
  const inputParts = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens];
  const result: TokenUsage = {};
  if (inputParts.some((count) => count !== undefined)) {
    result.inputTokens = inputParts.reduce<number>((total, count) => total + (count ?? 0), 0);
  }
  if (usage.output_tokens !== undefined) result.outputTokens = usage.output_tokens;
  if (usage.cache_read_input_tokens !== undefined) result.cachedInputTokens = usage.cache_read_input_tokens;
  if (result.inputTokens !== undefined || result.outputTokens !== undefined) {
    result.totalTokens = (result.inputTokens ?? 0) + (result.outputTokens ?? 0);
  }
  return result;
}

function sameUsage(a: TokenUsage, b: TokenUsage | null): boolean {
  return (
    b !== null &&
    a.inputTokens === b.inputTokens &&
    a.outputTokens === b.outputTokens &&
    a.cachedInputTokens === b.cachedInputTokens &&
    a.totalTokens === b.totalTokens
  );
}
