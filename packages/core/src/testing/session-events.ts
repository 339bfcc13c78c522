import type { CoreServerFrame } from "@pedelec/protocol/core-wire";
import type { SessionEvent } from "@pedelec/protocol/session-events";
import type { CoreConnection } from "@pedelec/core-client/core-client";

export type SessionEventOf<T extends SessionEvent["type"]> = Extract<SessionEvent, { type: T }>;

export interface SessionEventLog {
  /** Every event the connection has received, in order. */
  seen: SessionEvent[];
  /** The first event of this type that matches, already seen or still to come; rejects past the deadline. */
  until<T extends SessionEvent["type"]>(type: T, match?: (event: SessionEventOf<T>) => boolean): Promise<SessionEventOf<T>>;
}

/** Collects a connection's events and lets a test wait, with a deadline, for one that matches. */
export function collectSessionEvents(connection: CoreConnection, timeoutMs = 10_000): SessionEventLog {
  const seen: SessionEvent[] = [];
  const waiters: { match: (event: SessionEvent) => boolean; resolve: (event: SessionEvent) => void }[] = [];
  connection.onFrame((frame: CoreServerFrame) => {
    if (frame.kind !== "event") return;
    seen.push(frame.envelope.event);
    for (const waiter of [...waiters]) {
      if (!waiter.match(frame.envelope.event)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(frame.envelope.event);
    }
  });
  return {
    seen,
    until<T extends SessionEvent["type"]>(type: T, match: (event: SessionEventOf<T>) => boolean = () => true): Promise<SessionEventOf<T>> {
      const matches = (event: SessionEvent): boolean => event.type === type && match(event as SessionEventOf<T>);
      const already = seen.find(matches);
      if (already) return Promise.resolve(already as SessionEventOf<T>);
      return new Promise((resolvePromise, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no matching ${type} event within ${timeoutMs} ms; seen ${seen.map((event) => event.type).join(", ")}`));
        }, timeoutMs);
        const waiter = {
          match: matches,
          resolve: (event: SessionEvent) => {
            clearTimeout(timer);
            resolvePromise(event as SessionEventOf<T>);
          },
        };
        waiters.push(waiter);
      });
    },
  };
}
