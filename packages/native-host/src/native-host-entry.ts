import { CORE_VERSION } from "@pedelec/core-client/core-version";
import { runNativeHost } from "./native-host-main.js";

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
  runNativeHost();
}
