import type { ControlPanel, ControlPanelOptions } from "./control-panel/control-panel.js";
import type { CorePaths } from "./core-paths.js";
import { log } from "./logger.js";
import type { SessionManager } from "./session-manager.js";
import type { Settings } from "./settings.js";

/**
 * Starts the control panel, loading its module only now (after Core listens); undefined when it cannot start, which is
 * logged: Core runs without it.
 */
export async function startControlPanel(
  paths: CorePaths,
  sessions: SessionManager,
  loadSettings: () => Promise<Settings>,
  options: ControlPanelOptions | undefined,
): Promise<ControlPanel | undefined> {
  try {
    const { ControlPanel } = await import("./control-panel/control-panel.js");
    const panel = await ControlPanel.start({ paths, sessions, loadSettings }, options);
    // The address holds the secret: only where it is, never what it is.
    log("info", "control panel listening", { port: panel.port, urlFile: paths.controlPanelUrlFile });
    return panel;
  } catch (error) {
    log("warn", "the control panel could not start; Core runs without it", { error: String(error) });
    return undefined;
  }
}
