import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { DEFAULT_EXTENSION_ID } from "@pedelec/protocol/extension-id";
import { summarizeIssues } from "@pedelec/protocol/issue-summary";
import type { SessionManager } from "../session-manager.js";
import type { Settings } from "../settings.js";
import type { PanelApiHandler } from "./control-panel-server.js";
import {
  panelLogQuerySchema,
  panelSettingChangeSchema,
  sessionIdParameterSchema,
  type PanelLogsAnswer,
  type PanelOriginsAnswer,
  type PanelProvidersAnswer,
  type PanelSession,
} from "./control-panel-wire.js";
import { readRecentLogs } from "./panel-logs.js";
import { applySettingChange, panelProviders, panelSecrets } from "./panel-settings.js";

export interface PanelApiContext {
  sessions: SessionManager;
  loadSettings: () => Promise<Settings>;
  settingsFile: string;
  logsDir: string;
}

/** The extension's options page, where approvals and Full Access grants are changed. */
export const EXTENSION_OPTIONS_URL = `chrome-extension://${DEFAULT_EXTENSION_ID}/options.html`;

/**
 * The panel's JSON API below `/<secret>/api/`:
 *
 * | request | answer |
 * | --- | --- |
 * | `GET sessions` | `PanelSession[]` |
 * | `POST sessions/<id>/cancel`, `POST sessions/<id>/end` | `{ cancelled }`, `{ ended }` |
 * | `GET providers` | `PanelProvidersAnswer` |
 * | `PUT settings` (a `PanelSettingChange`, the Ollama key among them) | `PanelProvidersAnswer` as it is now (never a key) |
 * | `GET origins` | `PanelOriginsAnswer` |
 * | `GET logs?text=&level=&limit=` | `PanelLogsAnswer` |
 *
 * Sessions are ended and cancelled through the same Session methods the socket's endSession and cancelTurn use.
 */
export function createPanelApi(context: PanelApiContext): PanelApiHandler {
  const { sessions } = context;
  const providersAnswer = async (): Promise<PanelProvidersAnswer> => {
    const [reports, settings] = await Promise.all([sessions.providerReports(), context.loadSettings()]);
    const { defaultProvider, defaultEffortLevel, defaultModels } = settings;
    return {
      providers: panelProviders(reports, settings, sessions.providers),
      settings: { defaultProvider, defaultEffortLevel, defaultModels },
      secrets: panelSecrets(settings),
    };
  };
  /** A live session by id, through the page path (its own origin), so the panel acts exactly as the page would. */
  const liveSession = (id: string | undefined) => {
    const parsed = sessionIdParameterSchema.safeParse(id);
    if (!parsed.success) throw new PedelecError("INVALID_INPUT", `not a session id: ${summarizeIssues(parsed.error.issues).message}`);
    const summary = sessions.liveSessions().find((candidate) => candidate.info.sessionId === parsed.data);
    if (summary === undefined) throw new PedelecError("THREAD_NOT_FOUND", `no live session ${parsed.data}`);
    return sessions.getForOrigin(parsed.data, summary.origin);
  };

  return ({ method, segments, query, body }) => {
    const [resource, id, action, ...extra] = segments;
    if (extra.length > 0) return undefined;
    switch (`${method} ${resource}${id === undefined ? "" : "/:id"}${action === undefined ? "" : `/${action}`}`) {
      case "GET sessions":
        return Promise.resolve(
          sessions.liveSessions().map(
            ({ origin, info, turnCount }): PanelSession => ({
              sessionId: info.sessionId,
              provider: info.provider,
              effortLevel: info.effortLevel,
              effort: info.effort ?? null,
              model: info.model,
              sessionCreatedAt: info.sessionCreatedAt,
              status: info.status,
              workspace: info.workspace,
              access: info.access,
              usage: info.usage ?? {},
              origin,
              turnCount,
              turnRunning: info.activeTurn !== null,
            }),
          ),
        );
      case "POST sessions/:id/cancel":
        return (async () => ({ cancelled: await liveSession(id).cancelTurn() }))();
      case "POST sessions/:id/end":
        return (async () => ({ ended: await liveSession(id).end("requested") }))();
      case "GET providers":
        return providersAnswer();
      case "PUT settings":
        return (async () => {
          await applySettingChange(context.settingsFile, sessions.providers, await body(panelSettingChangeSchema));
          return providersAnswer();
        })();
      case "GET origins":
        return Promise.resolve<PanelOriginsAnswer>({ origins: sessions.originCounts(), extensionOptionsUrl: EXTENSION_OPTIONS_URL });
      case "GET logs":
        return (async (): Promise<PanelLogsAnswer> => {
          const parsed = panelLogQuerySchema.safeParse(Object.fromEntries(query));
          if (!parsed.success) throw new PedelecError("INVALID_INPUT", `invalid log query: ${summarizeIssues(parsed.error.issues).message}`);
          return readRecentLogs(context.logsDir, parsed.data);
        })();
      default:
        return undefined;
    }
  };
}
