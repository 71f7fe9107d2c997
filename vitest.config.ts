import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["corral-source"] },
  ssr: { resolve: { conditions: ["corral-source"] } },
  test: {
    include: ["apps/*/src/**/*.test.{ts,tsx}", "apps/*/test/**/*.test.ts", "packages/*/src/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // One private PostgreSQL for the run (apps/server/test/postgres.ts hands out databases).
    globalSetup: ["apps/server/test/postgres-server.ts"],
  },
});
