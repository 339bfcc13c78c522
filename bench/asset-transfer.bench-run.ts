// Prints the throughput of a 100 MiB asset upload and download through Core's asset server (a real Core process, a
// real session, real tickets) against a plain Node loopback PUT/GET server that streams to and from disk the same
// way (temporary file, fsync, rename), interleaved in one run, as ratios (goal ≥ 0.8×); and Core's peak RSS growth
// over the transfers (goal < 32 MiB), from the kernel's high-water mark of Core's process.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { CoreConnection } from "@pedelec/core-client/core-client";
import { exchange, patternBytes } from "@pedelec/core/testing/asset-test-client";
import { latencySummary, ms } from "./latency-summary.js";

const repoRoot = resolve(fileURLToPath(new URL("..", import.meta.url)));
const ROUNDS = Number.parseInt(process.env.BENCH_ASSET_ROUNDS ?? "5", 10);
const SIZE = 100 * 1024 * 1024;
const MiB = 1024 * 1024;
const ORIGIN = "http://127.0.0.1:4000";

// The baseline: what a careful plain Node server does, no tickets, no checks (Node's default stream buffer sizes).
const BASELINE_SERVER = `
import { createServer } from "node:http";
import { createReadStream, createWriteStream } from "node:fs";
import { rename, stat } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
const folder = process.argv[1];
const target = join(folder, "baseline.bin");
const server = createServer(async (request, response) => {
  try {
    if (request.method === "PUT") {
      const temporary = join(folder, ".upload-" + Math.random().toString(16).slice(2));
      await pipeline(request, createWriteStream(temporary, { flags: "wx", mode: 0o600, flush: true }));
      await rename(temporary, target);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    } else {
      const stats = await stat(target);
      response.writeHead(200, { "content-length": stats.size, "content-type": "application/octet-stream" });
      await pipeline(createReadStream(target), response);
    }
  } catch {
    response.destroy();
  }
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`;

async function firstLine(child: ChildProcess): Promise<string> {
  let buffer = "";
  for await (const chunk of child.stdout!) {
    buffer += String(chunk);
    if (buffer.includes("\n")) return buffer.split("\n")[0]!;
  }
  throw new Error("the process printed nothing");
}

async function openWhenReady(socketPath: string): Promise<CoreConnection> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await CoreConnection.open(socketPath);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 50));
    }
  }
}

async function statusKiB(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? Number.NaN);
}

async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function put(url: string): Promise<void> {
  const answer = await exchange(url, { method: "PUT", headers: { origin: ORIGIN, "content-length": SIZE }, body: patternBytes(SIZE) });
  expect(answer.status).toBe(200);
}

async function get(url: string): Promise<void> {
  let bytes = 0;
  const answer = await exchange(url, {
    method: "GET",
    headers: { origin: ORIGIN },
    discardBody: true,
    onBodyChunk: (chunk) => (bytes += chunk.length),
  });
  expect(answer.status).toBe(200);
  expect(bytes).toBe(SIZE);
}

it("measures 100 MiB asset transfers through Core against a plain loopback server", async () => {
  const root = await mkdtemp(join(tmpdir(), "pedelec-bench-assets-"));
  const home = join(root, "home");
  const baselineFolder = join(root, "baseline");
  await mkdir(baselineFolder);
  const core = spawn(process.execPath, [join(repoRoot, "packages/core/dist/core-entry.js")], {
    env: {
      ...process.env,
      PEDELEC_HOME: home,
      PEDELEC_PROVIDER_PATH: join(repoRoot, "test/stand-ins/claude"),
      CLAUDE_CONFIG_DIR: join(root, "claude"),
    },
    stdio: ["ignore", "ignore", "ignore"],
  });
  const baseline = spawn(process.execPath, ["--input-type=module", "-e", BASELINE_SERVER, baselineFolder], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const baselinePort = Number(await firstLine(baseline));
    const baselineUrl = `http://127.0.0.1:${baselinePort}/file`;
    const page = await openWhenReady(join(home, "run", "core.sock"));
    const { sessionId } = await page.request("createSession", { provider: "claude" }, ORIGIN);
    const corePut = async () => put((await page.request("prepareAssetUpload", { sessionId, path: "/bench.bin", sizeBytes: SIZE }, ORIGIN)).url);
    const coreGet = async () => get((await page.request("prepareAssetDownload", { sessionId, path: "/bench.bin" }, ORIGIN)).url);

    // A warm-up of each, so neither side pays for first-use costs in the samples.
    await corePut();
    await coreGet();
    await put(baselineUrl);
    await get(baselineUrl);

    const coreRssBefore = await statusKiB(core.pid!, "VmRSS");
    // Reset Core's high-water mark: what it reads after the rounds is the peak during them.
    await writeFile(`/proc/${core.pid}/clear_refs`, "5");
    const samples = { coreUpload: [] as number[], coreDownload: [] as number[], baseUpload: [] as number[], baseDownload: [] as number[] };
    for (let round = 0; round < ROUNDS; round += 1) {
      samples.coreUpload.push(await timed(corePut));
      samples.baseUpload.push(await timed(() => put(baselineUrl)));
      samples.coreDownload.push(await timed(coreGet));
      samples.baseDownload.push(await timed(() => get(baselineUrl)));
    }
    const corePeak = await statusKiB(core.pid!, "VmHWM");
    const throughput = (milliseconds: number) => `${(SIZE / MiB / (milliseconds / 1000)).toFixed(0)} MiB/s`;
    const line = (label: string, coreSamples: number[], baseSamples: number[]) => {
      const coreMedian = latencySummary(coreSamples).median;
      const baseMedian = latencySummary(baseSamples).median;
      console.log(
        `  ${label}: Core median ${ms(coreMedian)} (${throughput(coreMedian)}), plain server ${ms(baseMedian)} (${throughput(baseMedian)}), ` +
          `Core's throughput ${(baseMedian / coreMedian).toFixed(2)}× the plain server's (goal ≥ 0.8×)`,
      );
    };
    console.log(`asset transfer, 100 MiB, ${ROUNDS} rounds each (interleaved):`);
    line("upload  ", samples.coreUpload, samples.baseUpload);
    line("download", samples.coreDownload, samples.baseDownload);
    console.log(
      `  Core's peak RSS growth during the rounds: ${((corePeak - coreRssBefore) / 1024).toFixed(1)} MiB (goal < 32 MiB; RSS before ${(coreRssBefore / 1024).toFixed(1)} MiB)`,
    );
    page.close();
  } finally {
    baseline.kill();
    core.kill("SIGTERM");
    await once(core, "exit");
    await rm(root, { recursive: true, force: true });
  }
});
