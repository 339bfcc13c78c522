/**
 * The slice of a Chrome `runtime.Port` the gateway uses. A real port from `onConnectExternal` fits it as is;
 * tests pass a fake.
 */
export interface PagePort {
  readonly name: string;
  /** Filled in by the browser; the only trusted source of the caller's origin. */
  readonly sender?: PortSender | undefined;
  /** Throws when the other end is gone. */
  postMessage(message: unknown): void;
  disconnect(): void;
  readonly onMessage: { addListener(listener: (message: unknown) => void): void };
  readonly onDisconnect: { addListener(listener: () => void): void };
}

export interface PortSender {
  readonly origin?: string | undefined;
  readonly url?: string | undefined;
}
