import path from "node:path";
import { pgRegistryAt, sqliteRegistryAt, type TestRegistry } from "./test-registry.js";
import { registryEnv } from "./postgres.js";

/**
 * The registry of the server whose data dir is `dataDir`, opened while that server is down, in
 * whichever dialect this run keeps registries (`pnpm test:pg`: its PostgreSQL database): for tests
 * that read what a stopped server stored, or leave what a crash or an older version could have.
 */
export async function registryOf(dataDir: string): Promise<TestRegistry> {
  const url = (await registryEnv(dataDir)).CORRAL_DATABASE_URL;
  return url ? pgRegistryAt(url) : sqliteRegistryAt(path.join(dataDir, "corral.db"));
}

/** Runs `fn` on that registry, closing it after. */
export async function withRegistryOf<T>(dataDir: string, fn: (registry: TestRegistry) => Promise<T>): Promise<T> {
  const registry = await registryOf(dataDir);
  try {
    return await fn(registry);
  } finally {
    await registry.close();
  }
}
