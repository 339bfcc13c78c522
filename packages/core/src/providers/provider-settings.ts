import type { ProviderCode } from "@pedelec/protocol/domain";
import type { z } from "zod";
import { OLLAMA_SETTINGS } from "./ollama/ollama-settings.js";
import type { ProviderSettingKey, ProviderSettingsSection } from "./provider-settings-section.js";

/** Providers with a section of their own in settings.json: one line each, the section from the provider's folder. */
export const PROVIDER_SETTINGS = {
  ollama: OLLAMA_SETTINGS,
} as const satisfies Partial<Record<ProviderCode, ProviderSettingsSection>>;

/** The providers' sections as zod shape entries, keyed by code, for Core's settings schema. */
export type ProviderSettingsShape = { readonly [Code in keyof typeof PROVIDER_SETTINGS]: (typeof PROVIDER_SETTINGS)[Code]["schema"] };

/** The entries of Core's settings schema that belong to providers (see settings.ts). */
export function providerSettingsShape(): ProviderSettingsShape {
  const shape: Record<string, z.ZodType> = {};
  for (const [code, section] of Object.entries(PROVIDER_SETTINGS)) shape[code] = section.schema;
  return shape as ProviderSettingsShape;
}

/** One provider settings key as a `config` path (`ollama.baseUrl`), with what parses it. */
export interface ProviderConfigKey {
  /** The `a.b` path into settings.json. */
  key: string;
  /** The provider whose section holds it. */
  code: ProviderCode;
  field: string;
  setting: ProviderSettingKey;
}

/** Every provider settings key, provider by provider in PROVIDER_SETTINGS's order, fields in their section's order. */
export function providerConfigKeys(): ProviderConfigKey[] {
  const sections: [string, ProviderSettingsSection][] = Object.entries(PROVIDER_SETTINGS);
  return sections.flatMap(([code, section]) =>
    Object.entries(section.keys).map(([field, setting]) => ({ key: `${code}.${field}`, code: code as ProviderCode, field, setting })),
  );
}
