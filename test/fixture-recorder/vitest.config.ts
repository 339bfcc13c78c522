import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import rootConfig from "../../vitest.config.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

// Recording is not a test: `npm run record-fixtures` runs it on its own, and the normal suite never picks it up (its
// file does not end in `.test.ts`). The resolve aliases are the root's, so the adapters' source is what builds the argv.
export default defineConfig({
  root,
  resolve: rootConfig.resolve,
  test: {
    include: ["test/fixture-recorder/**/*.run.ts"],
    testTimeout: 15 * 60_000,
    reporters: ["verbose"],
  },
});
