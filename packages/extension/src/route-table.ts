/** What the extension remembers about a session some page route is subscribed to. */
export interface RoutedSession {
  readonly sessionId: string;
  /** The origin that created or resumed it; stamped on requests the extension makes for it (endSession, subscribe). */
  readonly origin: string;
  readonly autoEndOnDisconnect: boolean;
}

interface Entry<Route> extends RoutedSession {
  routes: Set<Route>;
}

/**
 * Which page routes (ports) receive which session's events. A session may have several routes (tabs); a route
 * may follow several sessions. `Route` is any identity the caller picks.
 */
export class RouteTable<Route> {
  readonly #sessions = new Map<string, Entry<Route>>();

  /** Adds `route` to the session; the latest origin and autoEnd setting win, since they come from Core's answer. */
  subscribe(route: Route, session: RoutedSession): void {
    const existing = this.#sessions.get(session.sessionId);
    const routes = existing?.routes ?? new Set<Route>();
    routes.add(route);
    this.#sessions.set(session.sessionId, { ...session, routes });
  }

  routesFor(sessionId: string): Route[] {
    return [...(this.#sessions.get(sessionId)?.routes ?? [])];
  }

  has(sessionId: string): boolean {
    return this.#sessions.has(sessionId);
  }

  /** Forgets a session and all its routes (it ended). */
  dropSession(sessionId: string): boolean {
    return this.#sessions.delete(sessionId);
  }

  /** Removes a route everywhere; returns the sessions that had it as their last route (and are now forgotten). */
  removeRoute(route: Route): RoutedSession[] {
    const orphaned: RoutedSession[] = [];
    for (const [sessionId, entry] of this.#sessions) {
      if (!entry.routes.delete(route) || entry.routes.size > 0) continue;
      this.#sessions.delete(sessionId);
      orphaned.push(describe(entry));
    }
    return orphaned;
  }

  /** Every session that still has at least one route. */
  sessions(): RoutedSession[] {
    return [...this.#sessions.values()].map(describe);
  }
}

function describe<Route>(entry: Entry<Route>): RoutedSession {
  return { sessionId: entry.sessionId, origin: entry.origin, autoEndOnDisconnect: entry.autoEndOnDisconnect };
}
