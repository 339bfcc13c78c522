import { z } from "zod";

const tokenCount = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/**
 * Tokens a provider reported, as far as it reports them: each field is present only when the provider said it.
 * `cachedInputTokens` is the part of `inputTokens` served from the provider's cache. `totalTokens` is the provider's
 * own total where it gives one, else input plus output.
 */
export const tokenUsageSchema = z.object({
  inputTokens: tokenCount.optional(),
  outputTokens: tokenCount.optional(),
  cachedInputTokens: tokenCount.optional(),
  totalTokens: tokenCount.optional(),
});
export type TokenUsage = z.infer<typeof tokenUsageSchema>;
