// The public testing kit, `@kaoruisaac/pedelec/testing`: a real Pedelec client wired to an in-page stand-in of the
// extension and the desktop runtime, with a scripted agent. Framework-agnostic (no test runner import) and free of
// Node built-ins, so it runs under vitest, jest and in a browser.
export { createPedelecTestKit, PedelecTestKit } from "./test-kit.js";
export type {
  LoseCoreOptions,
  PedelecTestKitOptions,
  ScriptedActivity,
  ScriptedArtifact,
  ScriptedAgent,
  ScriptedToolCallOptions,
  ScriptedTurn,
  ScriptedTurnEnd,
  TestKitApproval,
  TestKitChromePort,
  TestKitChromeRuntime,
  TestKitClientOptions,
  TestKitEndReason,
  TestKitEvent,
  TestKitEventEnvelope,
  TestKitProviderState,
  TestKitRequest,
  TestKitRequestHandler,
  TestKitSessionInfo,
  TestKitSettings,
  TestKitTool,
  TestKitToolAnswer,
  TestKitToolCall,
} from "./types.js";
