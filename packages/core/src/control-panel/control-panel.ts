import { rm } from "node:fs/promises";
import type { CorePaths } from "../core-paths.js";
import { writePrivateFileAtomically } from "../private-file.js";
import type { SessionManager } from "../session-manager.js";
import type { Settings } from "../settings.js";
import { CONTROL_PANEL_HOST, ControlPanelServer } from "./control-panel-server.js";
import { createPanelApi } from "./panel-api.js";
import { PanelEventStream, type PanelEventStreamOptions } from "./panel-event-stream.js";
import { newPanelSecret } from "./panel-guard.js";
import { PanelSignIn, type PanelSignInOptions } from "./panel-sign-in.js";
import { loadPanelUiFiles } from "./panel-ui-files.js";

export interface ControlPanelOptions {
  /** The Live events stream's limits (DEFAULT_PANEL_EVENT_STREAM_OPTIONS); tests make a slow client lag sooner. */
  events?: Partial<PanelEventStreamOptions>;
  /** The lifetimes of sign-in codes and browser sessions, and their clock; tests shorten them. */
  signIn?: PanelSignInOptions;
}

export interface ControlPanelContext {
  paths: CorePaths;
  sessions: SessionManager;
  loadSettings: () => Promise<Settings>;
}

/**
 * The control panel Core serves while it runs: a loopback HTTP server behind a secret made at each start, whose
 * address is written (0600) to `run/control-panel.url` for `pedelec open` and removed when Core stops. The address is
 * never logged and never sent on Core's socket. Browsers get in through a one-time code that `pedelec open` asks for
 * with the secret (panel-sign-in.ts), so the secret never reaches a command line.
 */
export class ControlPanel {
  private constructor(
    readonly url: string,
    private readonly server: ControlPanelServer,
    private readonly events: PanelEventStream,
    private readonly stopObserving: () => void,
    private readonly urlFile: string,
  ) {}

  static async start(context: ControlPanelContext, options: ControlPanelOptions = {}): Promise<ControlPanel> {
    const secret = newPanelSecret();
    const events = new PanelEventStream(options.events);
    const stopObserving = context.sessions.observeEvents((envelope, origin, provider) => events.publish({ origin, provider, envelope }));
    try {
      const server = await ControlPanelServer.start({
        secret,
        signIn: new PanelSignIn(options.signIn),
        events,
        ui: await loadPanelUiFiles(),
        api: createPanelApi({
          sessions: context.sessions,
          loadSettings: context.loadSettings,
          settingsFile: context.paths.settingsFile,
          logsDir: context.paths.logsDir,
        }),
      });
      const url = `http://${CONTROL_PANEL_HOST}:${server.port}/${secret}/`;
      try {
        await writePrivateFileAtomically(context.paths.controlPanelUrlFile, `${url}\n`);
      } catch (error) {
        await server.close();
        throw error;
      }
      return new ControlPanel(url, server, events, stopObserving, context.paths.controlPanelUrlFile);
    } catch (error) {
      stopObserving();
      events.close();
      throw error;
    }
  }

  get port(): number {
    return this.server.port;
  }

  /** Removes the address file first (nobody is sent to a panel that is going away), then closes every connection. */
  async close(): Promise<void> {
    this.stopObserving();
    await rm(this.urlFile, { force: true });
    this.events.close();
    await this.server.close();
  }
}
