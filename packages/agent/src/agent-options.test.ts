import { describe, expect, it } from "vitest";
import { DEFAULT_AGENT_MAX_TOOL_ROUNDS } from "@pedelec/protocol/agent-wire";
import { parseAgentOptions, parseBaseUrl } from "./agent-options.js";
import { chatUrlOf } from "./ollama-client.js";

const base = ["run", "--workspace", "/tmp/ws", "--model", "qwen3", "--base-url", "http://127.0.0.1:11434"];

describe("parseAgentOptions", () => {
  it("reads every flag", () => {
    const options = parseAgentOptions([
      ...base,
      "--conversation",
      "abcd1234-x",
      "--num-ctx",
      "8192",
      "--temperature",
      "0.7",
      "--think",
      "off",
      "--max-tool-rounds",
      "5",
    ]);
    expect(options).toEqual({
      workspace: "/tmp/ws",
      model: "qwen3",
      baseUrl: new URL("http://127.0.0.1:11434"),
      conversationId: "abcd1234-x",
      numCtx: 8192,
      temperature: 0.7,
      think: false,
      maxToolRounds: 5,
    });
    expect(parseAgentOptions(base).maxToolRounds).toBe(DEFAULT_AGENT_MAX_TOOL_ROUNDS);
    // Ollama's think levels pass through as they are.
    expect(parseAgentOptions([...base, "--think", "high"]).think).toBe("high");
    expect(parseAgentOptions([...base, "--think", "on"]).think).toBe(true);
    expect(() => parseAgentOptions([...base, "--think", "max"])).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
  });

  it("refuses what it does not know, with the code that says why", () => {
    expect(() => parseAgentOptions([...base, "--sandbox", "x"])).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
    expect(() => parseAgentOptions(["exec", ...base.slice(1)])).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
    expect(() => parseAgentOptions([...base, "--temperature", "warm"])).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
    expect(() => parseAgentOptions([...base, "--num-ctx", "-1"])).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
    expect(() => parseAgentOptions([...base, "--conversation", "a/../../b"])).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
    expect(() => parseAgentOptions(["run", "--workspace", "/tmp/ws", "--base-url", "http://x"])).toThrow(
      expect.objectContaining({ code: "MODEL_REQUIRED" }),
    );
  });

  it("accepts only plain http(s) base URLs, and keeps a path prefix for the chat endpoint", () => {
    for (const text of ["file:///etc/passwd", "127.0.0.1:11434", "http://a:b@host", "http://host/?x=1", "  "]) {
      expect(() => parseBaseUrl(text)).toThrow(expect.objectContaining({ code: "OLLAMA_BASE_URL_INVALID" }));
    }
    expect(chatUrlOf(parseBaseUrl("https://ollama.com")).href).toBe("https://ollama.com/api/chat");
    expect(chatUrlOf(parseBaseUrl("http://proxy.local/ollama/")).href).toBe("http://proxy.local/ollama/api/chat");
  });
});
