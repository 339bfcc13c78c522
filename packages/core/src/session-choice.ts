import { PROVIDER_REQUIRES_MODEL, type EffortLevel, type ExplicitEffort, type ProviderCode } from "@pedelec/protocol/domain";
import { effortNotSupported } from "@pedelec/protocol/explicit-effort";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import type { CreateSessionInput } from "@pedelec/protocol/requests";
import type { ProviderLocator } from "./provider-locator.js";
import type { ProviderAdapter } from "./providers/provider-adapter.js";
import type { ProviderRegistry } from "./providers/provider-registry.js";
import { configuredEffortArgv, type Settings } from "./settings.js";

/** How long createSession waits for a provider's own checks of the outside world (ProviderSessionOptions.prepare). */
const PROVIDER_PREPARE_TIMEOUT_MS = 10_000;
/** How long createSession waits for a CLI to say which explicit efforts the model has (OpenCode: 3–4 s). */
const MODEL_EFFORTS_TIMEOUT_MS = 20_000;

/** What a new session runs with, decided from the request and the settings before anything is made for it. */
export interface SessionChoice {
  provider: ProviderCode;
  model: string | null;
  /** The effort profile's level; null when the page named an explicit effort. */
  effortLevel: EffortLevel | null;
  /** The explicit effort the page named with its model; null for an effort profile. */
  effort: ExplicitEffort | null;
  /** The effort profile's (or the explicit effort's) argv, checked by the provider's rules and frozen. */
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
  /** Core's environment, which a provider's own checks run the CLI with (OpenCode's model variants). */
  env: NodeJS.ProcessEnv;
}

/**
 * Chooses the provider, model and effort of a new session and checks, in order: a provider (DEFAULT_PROVIDER_NOT_SET),
 * a model where the provider needs one (MODEL_REQUIRED), the Full Access grant (FULL_ACCESS_NOT_GRANTED), the
 * provider's own options without I/O, its executable (PROVIDER_UNAVAILABLE / DEFAULT_PROVIDER_UNAVAILABLE), the
 * provider's own options against the outside world, and the effort: an explicit one the CLI has (EFFORT_NOT_SUPPORTED),
 * or else the effort profile (EFFORT_PROFILE_INVALID).
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
  const effort = await chooseEffort(input, settings, provider, located.adapter, { executablePath: located.executablePath, env: context.env });
  return { provider, model, ...effort, executablePath: located.executablePath, providerOptions };
}

/** An explicit effort mapped to the CLI's own knob, or else the effort profile the request or the settings name. */
async function chooseEffort(
  input: CreateSessionInput,
  settings: Settings,
  provider: ProviderCode,
  adapter: ProviderAdapter,
  cli: { executablePath: string; env: NodeJS.ProcessEnv },
): Promise<Pick<SessionChoice, "effortLevel" | "effort" | "effortArgv">> {
  if (input.effort !== undefined) {
    const knob = adapter.explicitEffort;
    if (knob === undefined || !knob.levels.includes(input.effort)) throw effortNotSupported(provider, input.effort, knob?.levels ?? []);
    // The schema lets no effort through without its model.
    const model = input.model!;
    if (knob.modelLevels) {
      const env = Object.fromEntries(Object.entries(cli.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
      const signal = AbortSignal.timeout(MODEL_EFFORTS_TIMEOUT_MS);
      const levels = await knob.modelLevels({ executablePath: cli.executablePath, model, env, signal });
      if (!levels.includes(input.effort)) throw effortNotSupported(provider, input.effort, levels, model);
    }
    const effortArgv = adapter.validateEffortArgv(knob.argv(input.effort), `effort ${provider}/${input.effort}`);
    return { effortLevel: null, effort: input.effort, effortArgv };
  }
  const effortLevel = input.effortLevel ?? settings.defaultEffortLevel;
  const effortArgv = adapter.validateEffortArgv(
    configuredEffortArgv(settings, provider, effortLevel) ?? adapter.defaultEffortProfiles()[effortLevel],
    `effort profile ${provider}/${effortLevel}`,
  );
  return { effortLevel, effort: null, effortArgv };
}

function chooseProvider(input: CreateSessionInput, settings: Settings): ProviderCode {
  if (input.provider) return input.provider;
  if (settings.defaultProvider === null) {
    throw new PedelecError("DEFAULT_PROVIDER_NOT_SET", "no provider was given and no default provider is set in Pedelec");
  }
  return settings.defaultProvider;
}
