import { CoreConnection } from "./core-client.js";
import { locateCore } from "./core-location.js";
import { sessionIdSchema } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { THREAD_CAPABILITY_ENV, threadCapabilitySchema, type RequestPayload, type RequestResult } from "@pedelec/protocol/requests";

/** Bytes of a script's stdout and of its stderr the model gets back. */
export const SCRIPT_OUTPUT_CAP_BYTES = 16 * 1024;

export type PageTool = RequestResult<"toolList">[number];

/** What the model learns of a script run. */
export interface ScriptRunReport {
  exitCode: number | null;
  termination: RequestResult<"runScript">["termination"];
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
}

/**
 * The agent's way into Core, as the thread's own agent process: the page's tools and script runs, presented with the
 * thread id and the capability Core put in the environment.
 */
export class ThreadBridge {
  readonly #socketPath: string;
  readonly #threadId: string;
  readonly #capability: string;
  #connection: Promise<CoreConnection> | undefined;

  constructor(socketPath: string, threadId: string, capability: string) {
    this.#socketPath = socketPath;
    this.#threadId = threadId;
    this.#capability = capability;
  }

  /** The bridge of the thread the environment names, or null outside a Pedelec turn (no thread, no capability). */
  static fromEnvironment(env: NodeJS.ProcessEnv): ThreadBridge | null {
    const threadId = env.PEDELEC_THREAD_ID;
    const capability = env[THREAD_CAPABILITY_ENV];
    if (threadId === undefined || capability === undefined) return null;
    if (!sessionIdSchema.safeParse(threadId).success || !threadCapabilitySchema.safeParse(capability).success) {
      throw new PedelecError("THREAD_ACCESS_DENIED", `PEDELEC_THREAD_ID or ${THREAD_CAPABILITY_ENV} is malformed`);
    }
    return new ThreadBridge(locateCore(env).socketPath, threadId, capability);
  }

  async listTools(): Promise<PageTool[]> {
    return (await this.#shared()).request("toolList", { threadId: this.#threadId, capability: this.#capability });
  }

  /**
   * Calls a page tool; Core validates the arguments and waits for the page's answer. Each call has a connection of its
   * own, as `pedelec-cli tool-call` has: when `signal` aborts, closing it tells Core the call was abandoned, so the page's
   * handler is told too instead of running on to the tool's timeout.
   */
  async callTool(toolName: string, args: unknown, signal?: AbortSignal): Promise<unknown> {
    const payload = { threadId: this.#threadId, capability: this.#capability, toolName, argsJson: JSON.stringify(args) };
    const connection = await CoreConnection.open(this.#socketPath, signal);
    const onAbort = (): void => connection.close();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const answer = await connection.request("toolCall", payload, undefined, signal);
      return answer.result;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      connection.close();
    }
  }

  /** Runs a script as pedelec-ts-runtime does, on a connection of its own so every run-output frame on it is this run's. */
  async runScript(spec: { entry?: string; source?: string; args?: string[]; timeoutMs?: number }, signal?: AbortSignal): Promise<ScriptRunReport> {
    const payload: RequestPayload<"runScript"> = { threadId: this.#threadId, capability: this.#capability, ...spec };
    const connection = await CoreConnection.open(this.#socketPath, signal);
    // The turn's end closes this run's own connection, which Core takes as the end of the run.
    const onAbort = (): void => connection.close();
    signal?.addEventListener("abort", onAbort, { once: true });
    const output = { stdout: new CappedBuffer(SCRIPT_OUTPUT_CAP_BYTES), stderr: new CappedBuffer(SCRIPT_OUTPUT_CAP_BYTES) };
    connection.onFrame((frame) => {
      if (frame.kind === "run-output") output[frame.stream].push(Buffer.from(frame.data, "base64"));
    });
    try {
      const outcome = await connection.request("runScript", payload, undefined, signal);
      return {
        exitCode: outcome.exitCode,
        termination: outcome.termination,
        timedOut: outcome.timedOut,
        durationMs: Math.round(outcome.durationMs),
        stdout: output.stdout.text(),
        stderr: output.stderr.text(),
        stdoutTruncated: outcome.stdoutTruncated || output.stdout.truncated,
        stderrTruncated: outcome.stderrTruncated || output.stderr.truncated,
      };
    } finally {
      signal?.removeEventListener("abort", onAbort);
      connection.close();
    }
  }

  close(): void {
    void this.#connection?.then(
      (connection) => connection.close(),
      () => undefined,
    );
    this.#connection = undefined;
  }

  async #shared(): Promise<CoreConnection> {
    const current = this.#connection;
    if (current !== undefined) {
      const connection = await current.catch(() => undefined);
      if (connection !== undefined && !connection.closed) return connection;
    }
    this.#connection = CoreConnection.open(this.#socketPath);
    return this.#connection;
  }
}

/** Keeps the first `cap` bytes written to it and whether more came. */
class CappedBuffer {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  truncated = false;

  constructor(readonly cap: number) {}

  push(chunk: Buffer): void {
    const room = this.cap - this.#size;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = chunk.subarray(0, room);
    this.#chunks.push(kept);
    this.#size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.#chunks).toString("utf8");
  }
}
