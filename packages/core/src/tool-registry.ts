import type { ErrorObject, ValidateFunction } from "ajv";
import { firstUncomparableProperty, schemaUsesUniqueItems } from "@pedelec/protocol/uncomparable-args";
import { clipText, MAX_ISSUE_MESSAGE_LENGTH, MAX_REPORTED_ISSUES } from "@pedelec/protocol/issue-summary";
import { checkJsonLimits, describeJsonPath, JSON_VALUE_LIMITS, MAX_TOOL_ARGS_BYTES } from "@pedelec/protocol/json-limits";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { DEFAULT_TOOL_TIMEOUT_MS, type ToolManifestEntry } from "@pedelec/protocol/tool-schema";
import type { JsonValue } from "@pedelec/protocol/domain";
import { sharedToolArgsValidators, type ToolArgsValidators } from "./tool-args-validators.js";

export interface RegisteredTool {
  name: string;
  description: string;
  argsSchema: ToolManifestEntry["argsSchema"];
  timeoutMs: number;
  validate: ValidateFunction;
  /** The schema has uniqueItems somewhere (see uncomparable-args.ts). */
  usesUniqueItems: boolean;
}

/** The session's tools, from the app's skills manifest: the runtime source of truth for specs and arg checks. */
export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();

  constructor(entries: readonly ToolManifestEntry[], validators: ToolArgsValidators = sharedToolArgsValidators) {
    for (const entry of entries) {
      let validate: ValidateFunction;
      try {
        validate = validators.validatorFor(entry.argsSchema);
      } catch (error) {
        throw new PedelecError("INVALID_INPUT", `tool ${entry.name}: argsSchema is not usable: ${(error as Error).message}`);
      }
      this.#tools.set(entry.name, {
        name: entry.name,
        description: entry.description,
        argsSchema: entry.argsSchema,
        timeoutMs: entry.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
        validate,
        usesUniqueItems: schemaUsesUniqueItems(entry.argsSchema),
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

  /**
   * Parses the agent's JSON text, holds it to the JSON limits (MAX_JSON_DEPTH, MAX_JSON_NODES, MAX_TOOL_ARGS_BYTES)
   * so the event that carries it to the page can always be sent, and checks it against the tool's schema.
   */
  parseArgs(name: string, argsJson: string): JsonValue {
    const tool = this.get(name);
    let args: JsonValue;
    try {
      args = JSON.parse(argsJson) as JsonValue;
    } catch (error) {
      throw new PedelecError("TOOL_ARGS_INVALID", `arguments for ${name} are not valid JSON: ${clipText((error as Error).message, 120)}`);
    }
    const limits = checkJsonLimits(args, JSON_VALUE_LIMITS);
    if (!limits.ok) {
      throw new PedelecError(
        "TOOL_ARGS_INVALID",
        `arguments for ${name} are refused: the value at ${describeJsonPath(limits.path)} ${limits.message}`,
      );
    }
    // Written out again the arguments can outgrow the agent's text (1e20 becomes 21 digits).
    const bytes = Buffer.byteLength(JSON.stringify(args));
    if (bytes > MAX_TOOL_ARGS_BYTES) {
      throw new PedelecError("TOOL_ARGS_INVALID", `arguments for ${name} take ${bytes} bytes as JSON; the limit is ${MAX_TOOL_ARGS_BYTES}`);
    }
    const uncomparable = tool.usesUniqueItems ? firstUncomparableProperty(args) : null;
    if (uncomparable !== null) {
      throw new PedelecError(
        "TOOL_ARGS_INVALID",
        `arguments for ${name} are refused: ${describeJsonPath(uncomparable)} is a property name this tool's uniqueItems check cannot compare (toString, valueOf)`,
      );
    }
    if (!tool.validate(args)) {
      const problems = (tool.validate.errors ?? []).map(describeProblem);
      const shown = problems.slice(0, MAX_REPORTED_ISSUES);
      const more = problems.length > shown.length ? ` (and ${problems.length - shown.length} more)` : "";
      throw new PedelecError(
        "TOOL_ARGS_INVALID",
        `arguments for ${name} do not match its schema: ${shown.join("; ")}${more}. Run tool-spec ${name} to see the schema.`,
        { problems: shown, problemCount: problems.length },
      );
    }
    return args;
  }
}

function describeProblem(error: ErrorObject): string {
  const where = error.instancePath === "" ? "(root)" : error.instancePath;
  return clipText(`${where} ${error.message ?? "is invalid"}`, MAX_ISSUE_MESSAGE_LENGTH);
}
