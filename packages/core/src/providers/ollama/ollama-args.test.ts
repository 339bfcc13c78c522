import { describe, expect, it } from "vitest";
import type { ProviderTurnRequest } from "../provider-adapter.js";
import { buildOllamaArgs } from "./ollama-args.js";
import { createOllamaAdapter } from "./ollama-adapter.js";
import { TEST_TOOL_SERVER } from "../../testing/provider-turns.js";

function request(overrides: Partial<ProviderTurnRequest> = {}): ProviderTurnRequest {
  return {
    executablePath: "/home/user/.pedelec/bin/pedelec-agent",
    prompt: "hello",
    workspacePath: "/ws",
    providerSessionId: null,
    access: "sandbox",
    model: "qwen3",
    effortArgv: ["--num-ctx", "8192"],
    env: {},
    toolServer: TEST_TOOL_SERVER,
    signal: new AbortController().signal,
    providerOptions: { baseUrl: "http://127.0.0.1:11434", apiKey: "secret-key" },
    ...overrides,
  };
}

describe("ollama turn argv", () => {
  it("runs the agent in the workspace with the model, the endpoint and the effort, never the key", () => {
    const args = buildOllamaArgs(request());
    expect(args).toEqual(["run", "--workspace", "/ws", "--model", "qwen3", "--base-url", "http://127.0.0.1:11434", "--num-ctx", "8192"]);
    expect(args.join(" ")).not.toContain("secret-key");
  });

  it("continues the stored conversation on later turns", () => {
    expect(buildOllamaArgs(request({ providerSessionId: "conversation-1234" }))).toContain("--conversation");
  });

  it("refuses a turn without a model or an endpoint", () => {
    expect(() => buildOllamaArgs(request({ model: null }))).toThrow(expect.objectContaining({ code: "MODEL_REQUIRED" }));
    const { providerOptions: _providerOptions, ...withoutEndpoint } = request();
    expect(() => buildOllamaArgs(withoutEndpoint)).toThrow(expect.objectContaining({ code: "OLLAMA_BASE_URL_INVALID" }));
  });
});

describe("ollama effort profiles", () => {
  const adapter = createOllamaAdapter();

  it("accepts the agent's knobs with valid values, and its defaults", () => {
    for (const profile of Object.values(adapter.defaultEffortProfiles())) expect(() => adapter.validateEffortArgv(profile, "default")).not.toThrow();
    expect(adapter.validateEffortArgv(["--temperature", "0.2", "--think", "on", "--num-ctx", "131072"], "custom")).toHaveLength(6);
  });

  it.each([
    [["--workspace", "/etc"]],
    [["--base-url", "http://evil.example"]],
    [["--model", "other"]],
    [["--conversation", "x"]],
    [["--num-ctx"]],
    [["--num-ctx", "lots"]],
    [["--temperature", "7"]],
    [["--think", "maybe"]],
    [["--top-k", "40"]],
    [["extra"]],
  ])("refuses %j with EFFORT_PROFILE_INVALID", (tokens) => {
    expect(() => adapter.validateEffortArgv(tokens, "custom")).toThrow(expect.objectContaining({ code: "EFFORT_PROFILE_INVALID" }));
  });

  it("is Pedelec's own program, looked for in PEDELEC_HOME/bin only", () => {
    expect(adapter.bundled).toBe(true);
    expect(adapter.programName).toBe("pedelec-agent");
  });
});
