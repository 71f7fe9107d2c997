import { defineConfig } from "vitest/config";

// The compat suite (`pnpm test:compat`): real clients installed by apps/server/compat/setup.mjs, so it stays
// out of `pnpm test`. Files run one at a time: each starts CLIs that want a core of their own.
export default defineConfig({
  resolve: { conditions: ["corral-source"] },
  ssr: { resolve: { conditions: ["corral-source"] } },
  test: {
    include: ["apps/server/compat/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: "forks",
    fileParallelism: false,
  },
});
