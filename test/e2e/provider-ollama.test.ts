import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { approvedSession, repoRoot, setUpE2e, type E2eEnvironment } from "./harness.js";
import { logOf } from "./page-scripts.js";

interface OllamaServer {
  url: string;
  requests: { path: string; headers: Record<string, string>; body: any }[];
  close(): Promise<void>;
}

let environment: E2eEnvironment | undefined;
let server: OllamaServer | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
  await server?.close();
  server = undefined;
});

describe("an ollama session in real Chromium", () => {
  it("streams the answer of Pedelec's own agent and runs a page tool it calls natively", async () => {
    const { startOllamaServer } = (await import(pathToFileURL(join(repoRoot, "test/stand-ins/ollama/ollama-server.mjs")).href)) as {
      startOllamaServer: (options: { models: string[]; apiKey: string }) => Promise<OllamaServer>;
    };
    server = await startOllamaServer({ models: ["qwen3:latest"], apiKey: "local-key" });
    environment = await setUpE2e({ startCore: true });
    // Configured as a user would: the address and key go to settings.json, not the browser's environment.
    expect((await environment.pedelec("config", "set", "ollama.baseUrl", server.url)).code).toBe(0);
    expect((await environment.pedelec("config", "set", "ollama.apiKey", "local-key")).code).toBe(0);
    const { page } = await approvedSession(environment, environment.server.url, '{ provider: "ollama", model: "qwen3" }');

    expect(await page.evaluate(() => (window as any).send("reply: Hello from Ollama"))).toEqual({ ok: true });
    let log = await logOf(page);
    const deltas = log.filter((entry) => entry.kind === "delta").map((entry) => entry.delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Hello from Ollama");
    expect(log.filter((entry) => entry.kind === "chat").map((entry) => entry.text)).toEqual(["Hello from Ollama"]);

    await page.evaluate(() => ((window as any).log = []));
    expect(await page.evaluate(() => (window as any).send('call-tool add_todo {"title":"Buy milk"}'))).toEqual({ ok: true });
    log = await logOf(page);
    expect(await page.evaluate(() => (window as any).handlerCalls)).toEqual([{ title: "Buy milk" }]);
    expect(log.filter((entry) => entry.kind === "status").map((entry) => entry.status)).toEqual([
      "running",
      "waiting_tool_result",
      "running",
      "idle",
    ]);
    expect(log.filter((entry) => entry.kind === "chat").at(-1)?.text).toMatch(/^tool said: .*"card-1".*"Buy milk"/);

    // The model was given the page's tool natively, with its schema, and the key only as a header.
    const chat = server.requests.filter((request) => request.path === "/api/chat").at(-1)!;
    const addTodo = chat.body.tools.find((tool: { function: { name: string } }) => tool.function.name === "add_todo");
    expect(addTodo.function.parameters).toMatchObject({ type: "object", required: ["title"] });
    expect(chat.headers.authorization).toBe("Bearer local-key");
    // The earlier turn's answer is part of the conversation the model sees.
    expect(JSON.stringify(chat.body.messages)).toContain("Hello from Ollama");
  });
});
