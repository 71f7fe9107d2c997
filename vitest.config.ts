import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";

const integrationDir = "apps/server/test";

/**
 * `pnpm test:pg` runs the integration tests again with every server's registry in PostgreSQL. A
 * file that starts its own PostgreSQL database (usePostgres) and never asks which registry the
 * run is for runs exactly the same in both runs, so it runs once, in `pnpm test`.
 */
function alwaysOnPostgres(): string[] {
  return readdirSync(integrationDir)
    .filter((name) => name.endsWith(".test.ts"))
    .filter((name) => {
      const text = readFileSync(path.join(integrationDir, name), "utf8");
      return text.includes("usePostgres(") && !text.includes("registryOnPostgres");
    })
    .map((name) => `${integrationDir}/${name}`);
}

export default defineConfig({
  resolve: { conditions: ["corral-source"] },
  ssr: { resolve: { conditions: ["corral-source"] } },
  test: {
    include: ["apps/*/src/**/*.test.{ts,tsx}", "apps/*/test/**/*.test.ts", "packages/*/src/**/*.test.ts"],
    exclude: ["**/node_modules/**", ...(process.env.CORRAL_TEST_REGISTRY === "postgres" ? alwaysOnPostgres() : [])],
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
