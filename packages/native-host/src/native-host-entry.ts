import { locateCore } from "@pedelec/core-client/core-location";
import { socketFileExists } from "@pedelec/core-client/core-retry";
import { spawnCoreDetached } from "@pedelec/core-client/core-spawn";
import { CORE_VERSION } from "@pedelec/core-client/core-version";
import { coreEntryPath } from "./core-entry-path.js";
import type { CoreStartedEarly } from "./native-host-main.js";

const HELP = `pedelec-native-host ${CORE_VERSION}

The browser starts this program through Native Messaging when the Pedelec extension connects; it carries the
extension's messages to Pedelec Core over its local socket. It is not meant to be run by hand: \`pedelec install\`
registers it with the browsers and \`pedelec doctor\` checks that registration and every layer after it.

Options (from a terminal only): --help, --version`;

// Chrome passes the caller's origin (chrome-extension://<id>/), and on Windows a --parent-window=<handle> after it;
// a person at a terminal passes --help or --version, or nothing with the terminal as stdin.
const first = process.argv[2];
if (first === "--version") {
  process.stdout.write(`pedelec-native-host ${CORE_VERSION}\n`);
} else if (first === "--help" || first === "-h" || (first === undefined && process.stdin.isTTY === true)) {
  process.stdout.write(`${HELP}\n`);
} else {
  // Chrome starts the host when a page or the extension wants Core. When Core's socket is not there, Core starts now,
  // before the host loads the rest of itself (the bundle runs that part only on import()), so the two start side by
  // side instead of one after the other.
  const paths = locateCore(process.env);
  const coreStartedEarly: Promise<CoreStartedEarly | undefined> = socketFileExists(paths.socketPath)
    .then(async (present) => {
      if (present) return undefined;
      const at = new Date();
      const pid = await spawnCoreDetached(coreEntryPath(), paths, process.env);
      return { pid, at };
    })
    // The host then starts Core the usual way, and logs why it could not.
    .catch(() => undefined);
  // After the start: loading the rest first would put its few dozen milliseconds in front of Core's.
  void coreStartedEarly.then(() => import("./native-host-main.js")).then(({ runNativeHost }) => runNativeHost(coreStartedEarly));
}
