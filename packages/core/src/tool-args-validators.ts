import { Ajv, type ValidateFunction } from "ajv";
import canonicalize from "canonicalize";
import { linearRegExp } from "@pedelec/protocol/linear-regex";
import type { ToolManifestEntry } from "@pedelec/protocol/tool-schema";

export interface ToolArgsValidatorsOptions {
  /** Distinct schemas whose validators are kept for the next session that declares them. */
  maxCached?: number;
  /**
   * Compilations one Ajv instance serves before a fresh one replaces it. Ajv keeps every schema it compiled in its
   * code scope for good, so a long-lived instance would grow with every distinct schema pages ever sent.
   */
  compilationsPerInstance?: number;
}

const DEFAULT_MAX_CACHED = 256;
const DEFAULT_COMPILATIONS_PER_INSTANCE = 200;

/**
 * What warm() compiles: one schema with the keywords tool schemas use most, so that Ajv's own code for checking a
 * schema and generating its validator has run once (and, in Core's bundle, is in the code cache its rehearsal makes).
 */
const WARM_UP_SCHEMA = {
  type: "object",
  properties: {
    id: { type: "string", pattern: "^[a-z0-9-]{1,40}$" },
    title: { type: "string", minLength: 1, maxLength: 200 },
    kind: { type: "string", enum: ["a", "b"] },
    count: { type: "integer", minimum: 0 },
    tags: { type: "array", items: { type: "string" }, maxItems: 10 },
  },
  required: ["title"],
  additionalProperties: false,
} as const;

/**
 * Compiled argument validators, shared by every session. Building an Ajv and compiling its meta-schema costs over
 * ten milliseconds; compiling on a warm instance costs well under one. Sessions still cannot see each other's
 * schemas: the instance forgets every added schema and `$id` after each compilation, so an `$id` declared by one
 * session is neither a collision nor a `$ref` target for another, and a validator is reused only for a schema with
 * the very same canonical JSON, for which it is the same pure function.
 */
export class ToolArgsValidators {
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #maxCached: number;
  readonly #compilationsPerInstance: number;
  #ajv: Ajv | undefined;
  #compilations = 0;

  constructor(options: ToolArgsValidatorsOptions = {}) {
    this.#maxCached = options.maxCached ?? DEFAULT_MAX_CACHED;
    this.#compilationsPerInstance = options.compilationsPerInstance ?? DEFAULT_COMPILATIONS_PER_INSTANCE;
  }

  /**
   * Builds the instance the next compilation uses and compiles a sample schema with it (not kept), so the first
   * session with tools does not wait for Ajv's first compilation, which costs ten times a later one. Core calls it in
   * its background start.
   */
  warm(): void {
    if (this.#ajv !== undefined) return;
    const ajv = this.#newAjv();
    this.#ajv = ajv;
    this.#compilations += 1;
    ajv.compile(structuredClone(WARM_UP_SCHEMA));
    ajv.removeSchema();
  }

  /** How many validators are cached (for tests). */
  get cachedCount(): number {
    return this.#validators.size;
  }

  /** The validator for `schema`; throws Ajv's error when the schema is not usable (strict mode). */
  validatorFor(schema: ToolManifestEntry["argsSchema"]): ValidateFunction {
    const key = canonicalize(schema) ?? "null";
    const cached = this.#validators.get(key);
    if (cached !== undefined) {
      // Most recently used last, so the oldest is the first to go.
      this.#validators.delete(key);
      this.#validators.set(key, cached);
      return cached;
    }
    const validate = this.#compile(JSON.parse(key) as ToolManifestEntry["argsSchema"]);
    this.#validators.set(key, validate);
    if (this.#validators.size > this.#maxCached) {
      const oldest = this.#validators.keys().next().value;
      if (oldest !== undefined) this.#validators.delete(oldest);
    }
    return validate;
  }

  /** Compiles a private copy of the schema, which nobody else holds and so nobody can change afterwards. */
  #compile(schema: ToolManifestEntry["argsSchema"]): ValidateFunction {
    if (this.#ajv === undefined || this.#compilations >= this.#compilationsPerInstance) this.#ajv = this.#newAjv();
    const ajv = this.#ajv;
    this.#compilations += 1;
    try {
      return ajv.compile(schema);
    } finally {
      // A compiled validator holds everything it refers to; the instance keeps only its meta-schemas.
      ajv.removeSchema();
    }
  }

  #newAjv(): Ajv {
    this.#compilations = 0;
    // Strict mode turns any unsupported keyword into an error. Patterns come from the page and run on Core's only
    // thread: a linear-time engine, never a backtracking RegExp. Only own properties count: a required "constructor"
    // is not present in {} just because every object inherits one.
    return new Ajv({ allErrors: true, strict: true, strictRequired: false, ownProperties: true, code: { regExp: linearRegExp } });
  }
}

/** The validators Core's sessions share. */
export const sharedToolArgsValidators = new ToolArgsValidators();
