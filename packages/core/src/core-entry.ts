import { runCoreForeground } from "./core-main.js";

// The file the native host and `pedelec start --detach` launch as a background process.
process.exitCode = await runCoreForeground();
