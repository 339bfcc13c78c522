// Prints median / p95 of createSession through Core's socket (stand-in claude, a manifest of 10 tools) against a
// `ping` round trip on the same socket, interleaved in one run, and Core's memory before and after creating and
// ending 100 sessions.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { startCore } from "@pedelec/core/core-daemon";
import { collectGarbage } from "@pedelec/protocol/testing/heap-growth";
import { repoRoot } from "../test/e2e/harness.js";
import { latencySummary, ms } from "./latency-summary.js";

const RUNS = Number.parseInt(process.env.BENCH_CREATE_SESSION_RUNS ?? "100", 10);
const ORIGIN = "http://127.0.0.1:4000";

/** Ten tools of the shapes pages offer: objects with required fields, enums, bounds, patterns, arrays. */
const TOOLS = Array.from({ length: 10 }, (_, index) => ({
  name: `tool_${index}`,
  description: `Tool number ${index}`,
  argsSchema: {
    type: "object" as const,
    properties: {
      id: { type: "string" as const, pattern: "^[a-z0-9-]{1,40}$" },
      title: { type: "string" as const, minLength: 1, maxLength: 200 },
      column: { type: "string" as const, enum: ["todo", "doing", "done"] },
      position: { type: "integer" as const, minimum: 0, maximum: 1000 + index },
      labels: { type: "array" as const, items: { type: "string" as const }, maxItems: 10 },
      details: { type: "object" as const, properties: { note: { type: "string" as const } }, additionalProperties: false },
    },
    required: ["title"],
    additionalProperties: false,
  },
  timeoutMs: 30_000,
}));

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

it("measures createSession against a ping round trip, and memory after ending 100 sessions", async () => {
  const root = await mkdtemp(join(tmpdir(), "pedelec-bench-create-session-"));
  const home = join(root, "home");
  const core = await startCore({
    ...process.env,
    PEDELEC_HOME: home,
    PEDELEC_PROVIDER_PATH: join(repoRoot, "test/stand-ins/claude"),
    CLAUDE_CONFIG_DIR: join(root, "claude"),
  });
  const connection = await CoreConnection.open(core.paths.socketPath);
  try {
    const createAndEnd = async (): Promise<number> => {
      const started = performance.now();
      const info = await connection.request("createSession", { provider: "claude", skills: { guidance: "bench", tools: TOOLS } }, ORIGIN);
      const elapsed = performance.now() - started;
      await connection.request("endSession", { sessionId: info.sessionId }, ORIGIN);
      return elapsed;
    };
    // Warm-up: provider lookup, login-shell PATH, JIT.
    for (let index = 0; index < 10; index += 1) {
      await connection.request("ping", {});
      await createAndEnd();
    }
    collectGarbage();
    const before = process.memoryUsage();

    const pings: number[] = [];
    const creates: number[] = [];
    for (let index = 0; index < RUNS; index += 1) {
      const started = performance.now();
      await connection.request("ping", {});
      pings.push(performance.now() - started);
      creates.push(await createAndEnd());
    }
    // Ending a session may finish its clean-up just after the answer.
    await new Promise((resolve) => setTimeout(resolve, 500));
    collectGarbage();
    const after = process.memoryUsage();
    const leftWorkspaces = (await readdir(core.paths.workspacesDir)).length;

    const create = latencySummary(creates);
    const ping = latencySummary(pings);
    console.log(`createSession (10 tools) over ${creates.length} runs: median ${ms(create.median)}, p95 ${ms(create.p95)}`);
    console.log(`baseline, ping on the same socket, ${pings.length} runs: median ${ms(ping.median)}, p95 ${ms(ping.p95)}`);
    console.log(`ratio createSession / ping: median ${(create.median / ping.median).toFixed(1)}x, p95 ${(create.p95 / ping.p95).toFixed(1)}x`);
    console.log(
      `after creating and ending ${RUNS} sessions: RSS ${mib(before.rss)} → ${mib(after.rss)} (${mib(after.rss - before.rss)}), ` +
        `heap used ${mib(before.heapUsed)} → ${mib(after.heapUsed)} (${mib(after.heapUsed - before.heapUsed)}), ` +
        `managed workspace folders left: ${leftWorkspaces}`,
    );
  } finally {
    connection.close();
    await core.stop();
    await rm(root, { recursive: true, force: true });
  }
});
