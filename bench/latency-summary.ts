/** Median and 95th percentile of a set of timings. */
export function latencySummary(samples: readonly number[]): { median: number; p95: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { median: at(0.5), p95: at(0.95) };
}

/** A duration as the benches print it. */
export const ms = (value: number): string => `${value.toFixed(1)} ms`;
