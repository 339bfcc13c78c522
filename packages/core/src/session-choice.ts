import { PROVIDER_REQUIRES_MODEL, type EffortLevel, type ProviderCode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { CreateSessionInput } from "@pedelec/protocol/requests";
import type { ProviderLocator } from "./provider-locator.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { configuredEffortArgv, type Settings } from "./settings.js";

/** How long createSession waits for a provider's own checks of the outside world (ProviderSessionOptions.prepare). */
const PROVIDER_PREPARE_TIMEOUT_MS = 10_000;

/** What a new session runs with, decided from the request and the settings before anything is made for it. */
export interface SessionChoice {
  provider: ProviderCode;
  model: string | null;
  effortLevel: EffortLevel;
  /** The effort profile's argv, checked by the provider's rules and frozen. */
  effortArgv: readonly string[];
  /** The executable discovery found. */
  executablePath: string;
  /** The provider's own options (ProviderAdapter.sessionOptions), opaque here; undefined when it has none. */
  providerOptions: unknown;
}

/** What choosing a session's setup needs besides the request and the settings. */
export interface SessionChoiceContext {
  origin: string;
  /** True only when the request carried a native host attestation Core verified. */
  fullAccessAdmitted: boolean;
  providers: ProviderRegistry;
  locator: ProviderLocator;
}

/**
 * Chooses the provider, model and effort of a new session and checks, in order: a provider (DEFAULT_PROVIDER_NOT_SET),
 * a model where the provider needs one (MODEL_REQUIRED), the Full Access grant (FULL_ACCESS_NOT_GRANTED), the
 * provider's own options without I/O, its executable (PROVIDER_UNAVAILABLE / DEFAULT_PROVIDER_UNAVAILABLE), the
 * provider's own options against the outside world, and the effort profile (EFFORT_PROFILE_INVALID).
 */
export async function chooseSessionSetup(input: CreateSessionInput, settings: Settings, context: SessionChoiceContext): Promise<SessionChoice> {
  const provider = chooseProvider(input, settings);
  const model = input.model ?? settings.defaultModels[provider] ?? null;
  if (PROVIDER_REQUIRES_MODEL[provider] && model === null) {
    throw new PedelecError("MODEL_REQUIRED", `an ${provider} session needs a model (pass model, or set a default model for ${provider})`);
  }
  if (input.access === "full" && !context.fullAccessAdmitted) {
    throw new PedelecError("FULL_ACCESS_NOT_GRANTED", `Full Access is not granted to ${context.origin}`);
  }
  // The provider's own options: read and checked by its adapter, opaque here.
  const sessionOptions = context.providers.get(provider)?.sessionOptions;
  const providerOptions = sessionOptions?.read(settings);
  sessionOptions?.check(providerOptions);
  const located = await context.locator.locate(provider, input.provider === undefined, settings.providers[provider]?.path);
  await sessionOptions?.prepare({ options: providerOptions, model, signal: AbortSignal.timeout(PROVIDER_PREPARE_TIMEOUT_MS) });
  const effortLevel = input.effortLevel ?? settings.defaultEffortLevel;
  const effortArgv = located.adapter.validateEffortArgv(
    configuredEffortArgv(settings, provider, effortLevel) ?? located.adapter.defaultEffortProfiles()[effortLevel],
    `effort profile ${provider}/${effortLevel}`,
  );
  return { provider, model, effortLevel, effortArgv, executablePath: located.executablePath, providerOptions };
}

function chooseProvider(input: CreateSessionInput, settings: Settings): ProviderCode {
  if (input.provider) return input.provider;
  if (settings.defaultProvider === null) {
    throw new PedelecError("DEFAULT_PROVIDER_NOT_SET", "no provider was given and no default provider is set in Pedelec");
  }
  return settings.defaultProvider;
}
