import { createRequire } from "node:module";
import type { Ajv, ValidateFunction } from "ajv";
import type * as AjvModule from "ajv";
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

// Ajv is large and only sessions with tools need it: loaded on first use (or by warm()), not at Core's start.
let ajvModule: typeof AjvModule | undefined;
function ajvClass(): typeof Ajv {
  ajvModule ??= createRequire(import.meta.url)("ajv") as typeof AjvModule;
  return ajvModule.Ajv;
}

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
   * Loads Ajv and builds the instance the next compilation uses, so the first session with tools does not wait for
   * them. Core calls it while it has nothing else to do.
   */
  warm(): void {
    if (this.#ajv === undefined) this.#ajv = this.#newAjv();
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
    const AjvClass = ajvClass();
    return new AjvClass({ allErrors: true, strict: true, strictRequired: false, ownProperties: true, code: { regExp: linearRegExp } });
  }
}

/** The validators Core's sessions share. */
export const sharedToolArgsValidators = new ToolArgsValidators();
