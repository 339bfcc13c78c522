import { z } from "zod";
import { EFFORT_LEVELS, effortLevelSchema, providerCodeSchema, sessionIdSchema, type ProviderCode } from "@pedelec/protocol/domain";
import { type publicSettingsSchema, sessionInfoSchema, providerStatusSchema } from "@pedelec/protocol/requests";
import type { SessionEventEnvelope } from "@pedelec/protocol/session-events";
import type { WireError } from "@pedelec/protocol/wire-error";

/*
 * What the control panel's page and Core's panel server say to each other (JSON over loopback HTTP and one
 * Server-Sent Events stream). Session, provider, settings and error shapes are the protocol's own; only what exists
 * nowhere else is defined here. The page imports these types only, never the schemas.
 */

/** A live session as the Sessions page lists it. */
export const panelSessionSchema = sessionInfoSchema
  .pick({
    sessionId: true,
    provider: true,
    effortLevel: true,
    effort: true,
    model: true,
    sessionCreatedAt: true,
    status: true,
    workspace: true,
    access: true,
    usage: true,
  })
  .extend({ origin: z.string(), turnCount: z.number().int().min(0), turnRunning: z.boolean() });
export type PanelSession = z.infer<typeof panelSessionSchema>;

/** A provider as the Providers page shows it: its status, what only local programs see, and its effort profiles. */
export const panelProviderSchema = providerStatusSchema.extend({
  version: z.string().nullable(),
  executablePath: z.string().nullable(),
  /** Whether this version of Pedelec can drive it at all; the profiles of one it cannot are not editable. */
  supported: z.boolean(),
  /** The profile in force for each level, and whether it is the user's own or the provider's default. */
  effortProfiles: z.record(effortLevelSchema, z.object({ tokens: z.array(z.string()), configured: z.boolean() })),
});
export type PanelProvider = z.infer<typeof panelProviderSchema>;

/** A provider's secret setting (a key for its endpoint) as the Providers page shows it: never its value. */
export interface PanelSecret {
  /** Its settings key, as `pedelec config set` names it: `ollama.apiKey`. */
  key: string;
  provider: ProviderCode;
  /** The provider's name and the field's label: "Ollama", "API key". */
  providerName: string;
  label: string;
  /** What the secret is for and where it is kept. */
  description: string;
  /** Whether one is stored; the secret itself never leaves Core. */
  set: boolean;
}

export interface PanelProvidersAnswer {
  providers: PanelProvider[];
  settings: z.infer<typeof publicSettingsSchema>;
  /** Every provider's secret settings, in the order `pedelec config get` lists them. */
  secrets: PanelSecret[];
}

/** One change to settings.json, checked as Core checks it; the next session uses it. */
export const panelSettingChangeSchema = z.discriminatedUnion("setting", [
  z.strictObject({ setting: z.literal("defaultProvider"), value: providerCodeSchema.nullable() }),
  z.strictObject({ setting: z.literal("defaultEffortLevel"), value: effortLevelSchema }),
  /** An empty model removes the default. */
  z.strictObject({ setting: z.literal("defaultModel"), provider: providerCodeSchema, value: z.string().max(200) }),
  /** `tokens: null` goes back to the provider's default profile. */
  z.strictObject({
    setting: z.literal("effortProfile"),
    provider: providerCodeSchema,
    level: effortLevelSchema,
    tokens: z.array(z.string().max(10_000)).max(1_000).nullable(),
  }),
  /** A provider's secret (`key` as in PanelSecret), posted from the page's password field; empty clears it. Never echoed back. */
  z.strictObject({ setting: z.literal("providerSecret"), key: z.string().max(200), value: z.string().max(4_096) }),
]);
export type PanelSettingChange = z.infer<typeof panelSettingChangeSchema>;

export interface PanelOriginsAnswer {
  origins: { origin: string; live: number; ended: number }[];
  /** The extension's options page, where the user approves and revokes origins. */
  extensionOptionsUrl: string;
}

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const panelLogQuerySchema = z.strictObject({
  text: z.string().max(500).default(""),
  /** The least severe level shown. */
  level: z.enum(LOG_LEVELS).default("trace"),
  limit: z.coerce.number().int().min(1).max(2_000).default(500),
});

export interface PanelLogLine {
  /** ISO 8601, or null when the line carried no usable time. */
  time: string | null;
  level: LogLevel | null;
  message: string;
  fields: Record<string, unknown>;
  /** The log file's name (core.log or a rotated predecessor). */
  file: string;
}

export interface PanelLogsAnswer {
  /** Newest first. */
  lines: PanelLogLine[];
  /** More lines matched than were returned, or the files were longer than what was read of them. */
  truncated: boolean;
}

export const sessionIdParameterSchema = sessionIdSchema;
export { EFFORT_LEVELS };

/** A session event as the Live events stream sends it: the envelope, who made the session, long texts clipped. */
export interface PanelEvent {
  origin: string;
  provider: z.infer<typeof providerCodeSchema>;
  envelope: SessionEventEnvelope;
}

/** Sent on the stream (event name `dropped`) when events were left out because the page read too slowly. */
export interface PanelDroppedNotice {
  count: number;
}

/** `POST sign-in-codes` (under the secret's door only): a one-time address for a browser. */
export interface PanelSignInCodeAnswer {
  /** `http://127.0.0.1:<port>/sign-in/<code>`: good once, until `expiresAt`; it leads to `/panel/` with a cookie. */
  url: string;
  expiresAt: string;
}

/** Every refusal of the panel's API. */
export interface PanelErrorAnswer {
  error: Pick<WireError, "code" | "message">;
}
