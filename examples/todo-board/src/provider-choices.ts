import type { ProviderAvailability } from "@kaoruisaac/pedelec";

/** One entry of the provider picker. */
export interface ProviderChoice {
  value: string;
  label: string;
  available: boolean;
  /** Why the provider cannot be used, shown under the picker; "" when it can. */
  reason: string;
}

/**
 * The picker's entries from `listProviders()`: available providers first (in Pedelec's order), then the others with
 * their reason, so the user sees at once what to install or sign in to.
 */
export function providerChoices(providers: readonly ProviderAvailability[]): ProviderChoice[] {
  const choices = providers.map((provider) => ({
    value: provider.code,
    label: provider.available ? provider.name : `${provider.name} (unavailable)`,
    available: provider.available,
    reason: provider.available ? "" : `${provider.name}: ${provider.error ?? "unavailable"}`,
  }));
  return [...choices.filter((choice) => choice.available), ...choices.filter((choice) => !choice.available)];
}

/** The entry to select after a refresh: the current one if it is still usable, else the first usable one. */
export function preferredChoice(choices: readonly ProviderChoice[], current: string): string | undefined {
  const usable = choices.filter((choice) => choice.available);
  return (usable.find((choice) => choice.value === current) ?? usable[0])?.value;
}
