import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** One file the panel's page loads. */
export interface PanelUiFile {
  contentType: string;
  body: Buffer;
}

/** The page's files, by their path below the secret (`/`, `/app.js`, …). */
export interface PanelUiFiles {
  get(path: string): PanelUiFile | undefined;
}

/** What the build (scripts/bundle-control-panel.mjs) writes into dist/control-panel/. */
const BUNDLED: Record<string, string> = {
  "/app.js": "text/javascript; charset=utf-8",
  "/app.css": "text/css; charset=utf-8",
};

/** The page itself: the nav and an empty main that app.js fills. Nothing inline, so the strict CSP holds. */
const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pedelec control panel</title>
<link rel="stylesheet" href="app.css">
<script type="module" src="app.js"></script>
</head>
<body>
<header>
<strong>Pedelec</strong>
<nav>
<a href="#sessions" data-page="sessions">Sessions</a>
<a href="#events" data-page="events">Live events</a>
<a href="#providers" data-page="providers">Providers</a>
<a href="#origins" data-page="origins">Origins</a>
<a href="#logs" data-page="logs">Logs</a>
</nav>
</header>
<main id="page"><p data-role="missing-script">The panel's script did not load. Run <code>npm run build</code> and open the panel again.</p></main>
</body>
</html>
`;

/**
 * The folder the bundled page lives in: packages/core/dist/control-panel, found from this module whether it runs
 * from its TypeScript source, from tsc's output or from Core's one-file bundle (all of them inside the package).
 */
export function panelUiDirectory(from: string = fileURLToPath(import.meta.url)): string | undefined {
  for (let folder = dirname(from), depth = 0; depth < 4; folder = dirname(folder), depth += 1) {
    const candidate = join(folder, "dist", "control-panel");
    if (existsSync(join(candidate, "app.js"))) return candidate;
  }
  return undefined;
}

/** Reads the bundled files once; without a build, the page still loads and says what is missing. */
export async function loadPanelUiFiles(directory = panelUiDirectory()): Promise<PanelUiFiles> {
  const files = new Map<string, PanelUiFile>([["/", { contentType: "text/html; charset=utf-8", body: Buffer.from(INDEX_HTML) }]]);
  if (directory !== undefined) {
    for (const [path, contentType] of Object.entries(BUNDLED)) {
      const body = await readFile(join(directory, path.slice(1))).catch(() => undefined);
      if (body !== undefined) files.set(path, { contentType, body });
    }
  }
  return { get: (path) => files.get(path) };
}
