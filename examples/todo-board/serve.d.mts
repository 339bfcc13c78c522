/** Options of startStaticServer(). */
export interface StaticServerOptions {
  /** The folder to serve. */
  root: string;
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
}

/** A running static server. */
export interface StaticServer {
  /** E.g. "http://127.0.0.1:41234/" (with a trailing slash). */
  url: string;
  port: number;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Serves the files under `root` (GET/HEAD only), refusing any path that would leave it. */
export function startStaticServer(options: StaticServerOptions): Promise<StaticServer>;
