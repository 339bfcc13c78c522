import type { z } from "zod";

/** One field of a provider's settings section that a user sets on its own: `pedelec config set <code>.<field> <value>`. */
export interface ProviderSettingKey {
  /**
   * Present for a secret: `config get` shows only whether it is set, `pedelec config set <key> -` reads it from stdin
   * (a hidden prompt on a terminal), so it need not go on a command line, and the control panel's Providers page offers
   * a password field for it, labelled and explained as given here.
   */
  secret?: ProviderSecretField;
  /**
   * The value to store for the command-line text, `""` included (the field's reset value); throws the coded reason
   * the text is refused, checked exactly as the provider checks it where it is used.
   */
  parse(value: string): unknown;
}

/** How the control panel's Providers page shows a provider's secret setting. */
export interface ProviderSecretField {
  /** The field's label, after the provider's name: "API key". */
  label: string;
  /** One sentence under it: what the secret is for and where it is kept. */
  description: string;
}

/** A provider's own section of settings.json, kept under its code: its schema and the keys a user sets one by one. */
export interface ProviderSettingsSection {
  /** The section's schema, with the defaults a file without it gets; part of Core's settings schema. */
  schema: z.ZodType;
  /** The fields one sets one at a time, keyed by field name, in the order `config get` lists them. */
  keys: Readonly<Record<string, ProviderSettingKey>>;
}
