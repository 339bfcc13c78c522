// Prints median / p95 of the first streamed text of an ollama turn, against the local Ollama-compatible test server,
// three ways in one run: a bare streaming POST /api/chat (the server's own floor), `pedelec-agent` started as a process
// (process start → first text-delta line), and a whole turn through Core (sendText → first chat-delta event).
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore } from "@pedelec/core/core-daemon";
import { repoRoot } from "../test/e2e/harness.js";
import { latencySummary, ms } from "./latency-summary.js";

const RUNS = Number.parseInt(process.env.BENCH_OLLAMA_RUNS ?? "20", 10);
const API_KEY = "bench-key";

it("measures the first streamed text of an ollama turn", async () => {
  const { startOllamaServer } = (await import(pathToFileURL(join(repoRoot, "test/stand-ins/ollama/ollama-server.mjs")).href)) as {
    startOllamaServer: (options: { models: string[]; apiKey: string }) => Promise<{ url: string; close(): Promise<void> }>;
  };
  const server = await startOllamaServer({ models: ["qwen3:latest"], apiKey: API_KEY });
  const root = await mkdtemp(join(tmpdir(), "pedelec-bench-ollama-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(join(home, "bin"), { recursive: true });
  await mkdir(workspace);
  const agentEntry = join(repoRoot, "packages/agent/dist/agent-entry.js");
  const launcher = join(home, "bin", "pedelec-agent");
  await writeFile(launcher, `#!/bin/sh\nexec '${process.execPath}' '${agentEntry}' "$@"\n`);
  await chmod(launcher, 0o755);
  await writeFile(join(home, "settings.json"), JSON.stringify({ ollama: { baseUrl: server.url, apiKey: API_KEY } }));
  const prompt = "reply: The quick brown fox jumps over the lazy dog.";

  const bareRequest = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${server.url}/api/chat`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify({ model: "qwen3", messages: [{ role: "user", content: prompt }], stream: true }),
    });
    const reader = response.body!.getReader();
    await reader.read();
    const elapsed = performance.now() - started;
    await reader.cancel();
    return elapsed;
  };

  const agentProcess = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const child = spawn(launcher, ["run", "--workspace", workspace, "--model", "qwen3", "--base-url", server.url], {
        env: { PATH: process.env.PATH ?? "", PEDELEC_HOME: home, PEDELEC_OLLAMA_API_KEY: API_KEY },
        stdio: ["pipe", "pipe", "ignore"],
      });
      let buffer = "";
      let seen = false;
      child.stdout.on("data", (chunk: Buffer) => {
        buffer += chunk.toString();
        if (!seen && buffer.includes('"type":"text-delta"')) {
          seen = true;
          resolve(performance.now() - started);
        }
      });
      child.on("error", reject);
      child.on("close", () => (seen ? undefined : reject(new Error(`no text-delta: ${buffer}`))));
      child.stdin.end(prompt);
    });

  const core = await startCore({ ...process.env, PEDELEC_HOME: home, PEDELEC_PROVIDER_PATH: "/nonexistent" });
  const page = await CoreConnection.open(core.paths.socketPath);
  const origin = "http://127.0.0.1:4000";
  const { sessionId } = await page.request("createSession", { provider: "ollama", model: "qwen3" }, origin);
  let turn = 0;
  const throughCore = (): Promise<number> =>
    new Promise((resolve, reject) => {
      turn += 1;
      const turnId = `bench-${turn}`;
      let firstDelta = 0;
      const stop = page.onFrame((frame) => {
        if (frame.kind !== "event" || !("turnId" in frame.envelope.event) || frame.envelope.event.turnId !== turnId) return;
        if (frame.envelope.event.type === "chat-delta" && firstDelta === 0) firstDelta = performance.now() - started;
        if (frame.envelope.event.type === "turn-completed") {
          stop();
          resolve(firstDelta);
        }
        if (frame.envelope.event.type === "turn-failed") {
          stop();
          reject(new Error(JSON.stringify(frame.envelope.event.error)));
        }
      });
      const started = performance.now();
      page.request("sendText", { sessionId, turnId, text: prompt }, origin).catch(reject);
    });

  // Warm-ups: the page cache, Node's module loading, the server's first connection.
  await bareRequest();
  await agentProcess();
  await throughCore();
  const samples = { bare: [] as number[], agent: [] as number[], core: [] as number[] };
  for (let index = 0; index < RUNS; index += 1) {
    samples.bare.push(await bareRequest());
    samples.agent.push(await agentProcess());
    samples.core.push(await throughCore());
  }
  for (const values of Object.values(samples)) expect(values.every((value) => value > 0)).toBe(true);
  const bare = latencySummary(samples.bare);
  const agent = latencySummary(samples.agent);
  const viaCore = latencySummary(samples.core);
  console.log(`ollama first streamed text, ${RUNS} runs each (interleaved), local test server:`);
  console.log(`  bare streaming POST /api/chat:               median ${ms(bare.median)}, p95 ${ms(bare.p95)}`);
  console.log(`  pedelec-agent process start → text-delta:    median ${ms(agent.median)}, p95 ${ms(agent.p95)}`);
  console.log(`  Core sendText → first chat-delta:            median ${ms(viaCore.median)}, p95 ${ms(viaCore.p95)}`);
  page.close();
  await core.stop();
  await server.close();
  await rm(root, { recursive: true, force: true });
});
