// The public API of @kaoruisaac/pedelec. Browser-only and free of Node built-ins (a test keeps it that way).
export { Pedelec, DEFAULT_BRIDGE_TIMEOUT_MS } from "./pedelec.js";
export { PedelecSession } from "./pedelec-session.js";
export { defineTool } from "./define-tool.js";
export type { StandardSchemaToolInput } from "./define-tool.js";
// The interface every Standard Schema library implements; tool definitions name it.
export type { StandardSchemaV1 } from "@standard-schema/spec";
export { PedelecError } from "@pedelec/protocol/pedelec-error";
export type { WireError } from "@pedelec/protocol/pedelec-error";
export type { ErrorCode } from "@pedelec/protocol/error-codes";
export type { DiskSpaceLowDetails, LimitReachedDetails } from "@pedelec/protocol/resource-limits";
export { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
export type {
  AccessMode,
  Activity,
  ApprovalStatus,
  AssetEntry,
  AssetReadKind,
  AssetReadOptions,
  AssetUploadOptions,
  AssetUploadProgress,
  ArgsSchemaNode,
  Artifact,
  ChatMessage,
  CreateSessionCommonOptions,
  CreateSessionOptions,
  CreateSessionRequestOptions,
  EffortLevel,
  ExplicitEffort,
  JsonSchemaToolDefinition,
  JsonValue,
  PedelecAvailability,
  PedelecEventContext,
  PedelecOptions,
  PedelecRunCommonOptions,
  PedelecRunOptions,
  PedelecRunResult,
  PedelecSettings,
  PedelecWorkspace,
  ProviderAvailability,
  ProviderCode,
  ReadonlySchema,
  ResumeSessionOptions,
  RunTermination,
  SendTextOptions,
  SessionEndReason,
  SessionSkills,
  SessionStatus,
  StandardSchemaToolDefinition,
  TokenUsage,
  ToolArgsFor,
  ToolArgsMap,
  ToolArgsOf,
  ToolArgsSchema,
  ToolArgsStandardSchema,
  ToolDefinition,
  ToolDefinitionBase,
  ToolHandler,
  ToolHandlerContext,
  ToolNameOf,
  TurnKind,
} from "./types.js";
