// The file the native host and `pedelec start --detach` launch as a background process, as its bundle
// (scripts/bundle.mjs). No top-level await: the bundle is a script.
import { runCoreForeground } from "./core-main.js";

void runCoreForeground().then((code) => {
  process.exitCode = code;
});
