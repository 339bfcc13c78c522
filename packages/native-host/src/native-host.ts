import { CoreConnection } from "@pedelec/core-client/core-client";
import { connectToCore } from "@pedelec/core-client/core-launch";
import type { CoreLocation } from "@pedelec/core-client/core-location";
import { CORE_VERSION } from "@pedelec/core-client/core-version";
import { newNonce, readAttestationKey, requestDigest, signClaims } from "@pedelec/core-client/full-access-attestation";
import { ATTESTATION_TTL_MS } from "@pedelec/protocol/full-access";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import {
  extensionToHostMessageSchema,
  type ExtensionToHostMessage,
  type HostStatusFrame,
  type HostToExtensionMessage,
} from "@pedelec/protocol/native-wire";
import type { CoreRequestFrame } from "@pedelec/protocol/core-wire";
import { PROTOCOL_VERSION } from "@pedelec/protocol/protocol-version";

/** The host says hello to Core on every connection, stating its protocol version. */
const CORE_CONNECTION_OPTIONS = { part: "native-host" } as const;

export interface NativeHostOptions {
  /** Core's home, socket, logs and keys (Core's own CorePaths fits). */
  paths: CoreLocation;
  /** Sends one message to the extension (framing and chunking are the caller's). */
  sendToExtension: (message: HostToExtensionMessage) => void;
  /** Starts Core in the background; called at most once per connection attempt. */
  launchCore: () => Promise<void>;
  /**
   * A start of Core the host's entry made before it loaded the rest of the host (see native-host-entry.ts): settles to
   * that Core's pid, or to undefined when it found Core's socket there (or could not start it). The first connection
   * waits for that Core instead of starting another; later ones start Core as usual.
   */
  coreLaunchedAtStart?: Promise<number | undefined>;
  /** How long to keep retrying after launching Core. */
  coreStartTimeoutMs: number;
  log: (message: string, fields?: Record<string, unknown>, level?: "info" | "warn" | "error") => void;
  /** The extension Chrome started this host for (`chrome-extension://<id>/`, Chrome's first argument), or undefined. */
  extensionOrigin: string | undefined;
  now?: () => number;
}

/**
 * The bridge between the extension and Core: forwards request frames to Core and everything Core says back.
 * If Core is not running it starts it and retries for a bounded time; requests wait meanwhile.
 */
export class NativeHost {
  #core: CoreConnection | undefined;
  #connecting: Promise<CoreConnection> | undefined;
  /** Requests forwarded to Core and not answered yet, so a Core crash can fail them instead of leaving them hanging. */
  readonly #inFlight = new Set<string>();
  readonly #stopped = new AbortController();
  #launchedAtStart: Promise<number | undefined> | undefined;

  constructor(private readonly options: NativeHostOptions) {
    this.#launchedAtStart = options.coreLaunchedAtStart;
  }

  start(): void {
    this.#status("connecting");
    void this.#ensureCore().catch(() => undefined);
  }

  /** One message from the extension. */
  handleMessage(message: unknown): void {
    const parsed = extensionToHostMessageSchema.safeParse(message);
    if (!parsed.success) {
      const id = (message as { id?: unknown } | null)?.id;
      const summary = summarizeIssues(parsed.error.issues);
      const error = new PedelecError(
        "INVALID_INPUT",
        `the extension sent a message that does not match the protocol: ${summary.message}`,
        summary.details,
      );
      this.options.log("rejected an invalid message from the extension", { issues: parsed.error.issues.length }, "warn");
      if (typeof id === "string" && id.length > 0 && id.length <= 128) {
        this.options.sendToExtension({ kind: "response", id, ok: false, error: error.toWire() });
      }
      return;
    }
    void this.#admit(parsed.data).then(
      (frame) => this.#forward(frame),
      (error: unknown) => this.#fail(parsed.data.id, PedelecError.from(error, "FULL_ACCESS_ATTESTATION_INVALID")),
    );
  }

  stop(): void {
    this.#stopped.abort();
    this.#core?.close();
  }

  /**
   * Turns the extension's Full Access claim into an attestation signed with Core's key, bound to this request, the
   * extension Chrome started us for, a fresh nonce and a short expiry. Requests without a claim pass unchanged.
   */
  async #admit(message: ExtensionToHostMessage): Promise<CoreRequestFrame> {
    const { fullAccessClaim, ...frame } = message;
    if (fullAccessClaim === undefined) return frame;
    const extensionOrigin = this.options.extensionOrigin;
    if (extensionOrigin === undefined || !/^chrome-extension:\/\/[a-p]{32}\/$/.test(extensionOrigin)) {
      throw new PedelecError(
        "FULL_ACCESS_ATTESTATION_INVALID",
        "the native host was not started by a browser extension, so it cannot attest Full Access",
      );
    }
    // The key is read per admission so a Core that created it after this host started is still trusted.
    const key = readAttestationKey(this.options.paths.keysDir);
    const issuedAt = (this.options.now ?? Date.now)();
    const attestation = signClaims(key, {
      version: 1,
      origin: frame.origin,
      extensionOrigin,
      ...fullAccessClaim,
      requestDigest: requestDigest({ type: frame.type, origin: frame.origin, payload: frame.payload }),
      nonce: newNonce(),
      issuedAt,
      expiresAt: issuedAt + ATTESTATION_TTL_MS,
    });
    this.options.log("attested a Full Access request", { origin: frame.origin, type: frame.type });
    return { ...frame, attestation };
  }

  async #forward(frame: CoreRequestFrame): Promise<void> {
    let core: CoreConnection;
    try {
      core = await this.#ensureCore();
    } catch (error) {
      this.#fail(frame.id, PedelecError.from(error, "CORE_RUNTIME_UNAVAILABLE"));
      return;
    }
    try {
      this.#inFlight.add(frame.id);
      core.sendFrame(frame);
    } catch (error) {
      this.#inFlight.delete(frame.id);
      this.#fail(frame.id, PedelecError.from(error, "CORE_RUNTIME_UNAVAILABLE"));
    }
  }

  #fail(id: string, error: PedelecError): void {
    this.options.sendToExtension({ kind: "response", id, ok: false, error: error.toWire() });
  }

  #ensureCore(): Promise<CoreConnection> {
    if (this.#core && !this.#core.closed) return Promise.resolve(this.#core);
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(): Promise<CoreConnection> {
    const { paths } = this.options;
    const launchedAtStart = await this.#launchedAtStart;
    this.#launchedAtStart = undefined;
    let connection = await CoreConnection.open(paths.socketPath, undefined, CORE_CONNECTION_OPTIONS).catch(() => undefined);
    const launched = connection === undefined || launchedAtStart !== undefined;
    if (!connection) {
      if (launchedAtStart === undefined) {
        this.options.log("Core is not running; starting it", { home: paths.home });
        try {
          await this.options.launchCore();
        } catch (error) {
          this.options.log("could not start Core", { error: (error as Error).message }, "error");
        }
      }
      connection = await connectToCore(paths, this.options.coreStartTimeoutMs, this.#stopped.signal, CORE_CONNECTION_OPTIONS);
    }
    if (!connection) {
      const error = new PedelecError(
        "CORE_RUNTIME_UNAVAILABLE",
        `Pedelec Core did not start within ${this.options.coreStartTimeoutMs} ms (PEDELEC_HOME=${paths.home}); see ${paths.logsDir}/core.log`,
      );
      this.#status("unavailable", error, launched);
      throw error;
    }
    this.#attach(connection, launched);
    return connection;
  }

  #attach(connection: CoreConnection, launched: boolean): void {
    this.#core = connection;
    connection.onFrame((frame) => {
      if (frame.kind === "response") this.#inFlight.delete(frame.id);
      // Script output is streamed only to the agent's own command; the extension never starts such a run.
      if (frame.kind === "run-output") return;
      this.options.sendToExtension(frame);
    });
    connection.onClose((error) => {
      if (this.#core === connection) this.#core = undefined;
      if (this.#stopped.signal.aborted) return;
      // A Core that cannot talk to this host says so by its code, which names the part to update; keep it.
      const lost =
        error?.code === "PROTOCOL_VERSION_MISMATCH"
          ? error
          : new PedelecError("CORE_RUNTIME_UNAVAILABLE", error?.message ?? "the connection to Pedelec Core closed");
      for (const id of this.#inFlight) this.#fail(id, lost);
      this.#inFlight.clear();
      this.options.log("lost the connection to Core", { error: lost.message }, "warn");
      this.#status("unavailable", lost, launched);
    });
    this.#status("connected", undefined, launched);
  }

  #status(core: HostStatusFrame["core"], error?: PedelecError, coreLaunched?: boolean): void {
    const frame: HostStatusFrame = { kind: "host-status", version: CORE_VERSION, protocolVersion: PROTOCOL_VERSION, core };
    if (coreLaunched !== undefined) frame.coreLaunched = coreLaunched;
    if (error) frame.error = error.toWire();
    this.options.sendToExtension(frame);
  }
}
