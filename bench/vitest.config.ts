import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL("..", import.meta.url));

// The benchmark is not a test: `npm run bench` runs it on its own and it prints figures instead of asserting them.
export default defineConfig({
  root,
  test: {
    include: ["bench/**/*.bench-run.ts"],
    testTimeout: 30 * 60_000,
    hookTimeout: 120_000,
    reporters: ["verbose"],
  },
});
