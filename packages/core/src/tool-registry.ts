import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { DEFAULT_TOOL_TIMEOUT_MS, type ToolManifestEntry } from "@pedelec/protocol/tool-schema";
import type { JsonValue } from "@pedelec/protocol/domain";

export interface RegisteredTool {
  name: string;
  description: string;
  argsSchema: ToolManifestEntry["argsSchema"];
  timeoutMs: number;
  validate: ValidateFunction;
}

/** The session's tools, from the app's skills manifest: the runtime source of truth for specs and arg checks. */
export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();

  constructor(entries: readonly ToolManifestEntry[]) {
    // One Ajv per registry: schemas are per session, and strict mode turns any unsupported keyword into an error.
    const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
    for (const entry of entries) {
      let validate: ValidateFunction;
      try {
        validate = ajv.compile(entry.argsSchema);
      } catch (error) {
        throw new PedelecError("INVALID_INPUT", `tool ${entry.name}: argsSchema is not usable: ${(error as Error).message}`);
      }
      this.#tools.set(entry.name, {
        name: entry.name,
        description: entry.description,
        argsSchema: entry.argsSchema,
        timeoutMs: entry.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
        validate,
      });
    }
  }

  get names(): string[] {
    return [...this.#tools.keys()];
  }

  list(): RegisteredTool[] {
    return [...this.#tools.values()];
  }

  get(name: string): RegisteredTool {
    const tool = this.#tools.get(name);
    if (!tool) {
      const known = this.names.length > 0 ? this.names.join(", ") : "none";
      throw new PedelecError("TOOL_NOT_FOUND", `no tool named ${name} in this thread (tools: ${known})`);
    }
    return tool;
  }

  /** Parses the agent's JSON text and checks it against the tool's schema. */
  parseArgs(name: string, argsJson: string): JsonValue {
    const tool = this.get(name);
    let args: JsonValue;
    try {
      args = JSON.parse(argsJson) as JsonValue;
    } catch (error) {
      throw new PedelecError("TOOL_ARGS_INVALID", `arguments for ${name} are not valid JSON: ${(error as Error).message}`);
    }
    if (!tool.validate(args)) {
      const problems = (tool.validate.errors ?? []).map(describeProblem);
      throw new PedelecError(
        "TOOL_ARGS_INVALID",
        `arguments for ${name} do not match its schema: ${problems.join("; ")}. Run tool-spec ${name} to see the schema.`,
        { problems },
      );
    }
    return args;
  }
}

function describeProblem(error: ErrorObject): string {
  const where = error.instancePath === "" ? "(root)" : error.instancePath;
  return `${where} ${error.message ?? "is invalid"}`;
}
