import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  resolve: {
    // Unit tests run against each package's TypeScript source; the built dist is what end-to-end tests run.
    alias: [
      { find: /^@pedelec\/([a-z-]+)\/(.*)$/, replacement: `${root}packages/$1/src/$2.ts` },
      { find: /^@kaoruisaac\/pedelec$/, replacement: `${root}packages/sdk/src/index.ts` },
      { find: /^@kaoruisaac\/pedelec\/react$/, replacement: `${root}packages/sdk/src/react/index.ts` },
      { find: /^@kaoruisaac\/pedelec\/testing$/, replacement: `${root}packages/sdk/src/testing-kit/index.ts` },
    ],
  },
  test: {
    reporters: ["default", "./scripts/plain-summary-reporter.ts"],
    // Core's log lines are kept per test and printed only for a test that fails.
    setupFiles: ["./test/setup/logs-on-failure.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [
            "packages/*/src/**/*.test.ts",
            "packages/*/src/**/*.test.tsx",
            "examples/*/src/**/*.test.ts",
            "examples/*/src/**/*.test.tsx",
            "test/stand-ins/**/*.test.ts",
            "test/model-servers/**/*.test.ts",
            "test/real-clis/**/*.test.ts",
            "scripts/**/*.test.ts",
          ],
          typecheck: {
            enabled: true,
            include: ["packages/*/src/**/*.test-d.ts", "packages/*/src/**/*.test-d.tsx"],
            tsconfig: "./tsconfig.typetests.json",
          },
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          // Each file drives its own Chromium; two cores do not run several at once well.
          fileParallelism: false,
          testTimeout: 90_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
