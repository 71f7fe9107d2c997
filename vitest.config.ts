import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { leftOutOfPgRun } from "./apps/server/test/pg-run.js";

export default defineConfig({
  resolve: { conditions: ["corral-source"] },
  ssr: { resolve: { conditions: ["corral-source"] } },
  test: {
    include: ["apps/*/src/**/*.test.{ts,tsx}", "apps/*/test/**/*.test.ts", "packages/*/src/**/*.test.ts"],
    exclude: [
      "**/node_modules/**",
      // `pnpm test:pg` runs again only the files whose servers' registries it moves to PostgreSQL.
      ...(process.env.CORRAL_TEST_REGISTRY === "postgres" ? leftOutOfPgRun("apps/server/test") : []),
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Vitest's default is a worker fewer than the cores: one on a 2-core machine, where the tests
    // spend most of their time waiting on child processes, sockets and PostgreSQL.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // One private PostgreSQL for the run (apps/server/test/postgres.ts hands out databases).
    globalSetup: ["apps/server/test/postgres-server.ts"],
  },
});
