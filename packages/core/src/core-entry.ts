// The file the native host and `pedelec start --detach` launch as a background process, as its one-file bundle
// (scripts/bundle.mjs). No top-level await: the bundle is a script.
void import("./core-main.js")
  .then(({ runCoreForeground }) => runCoreForeground())
  .then((code) => {
    process.exitCode = code;
  });
