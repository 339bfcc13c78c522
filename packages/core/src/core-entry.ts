import { prefetchLoginShellPath } from "./providers/login-shell-path.js";

// The file the native host and `pedelec start --detach` launch as a background process, as its one-file bundle
// (scripts/bundle.mjs). No top-level await: the bundle is a script.
// A page's first session waits for the login shell's PATH: its shell runs while the rest of Core loads.
prefetchLoginShellPath(process.env);
void import("./core-main.js")
  .then(({ runCoreForeground }) => runCoreForeground())
  .then((code) => {
    process.exitCode = code;
  });
