// Which integration test files `pnpm test:pg` runs again with every server's registry in
// PostgreSQL. vitest.config.ts leaves the others out of that run; pg-run.test.ts keeps the rule
// honest. `CORRAL_TEST_REGISTRY=postgres npx vitest list --filesOnly apps/server/test` shows the run.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * The helpers through which a test gets a server, or a stopped server's registry, in the run's
 * dialect (each ends in registryEnv). A file that calls none of them runs the same in both runs.
 */
export const REGISTRY_ENTRY_POINTS = ["startServer", "startServerProcess", "registryOf", "withRegistryOf", "registryEnv"];

/**
 * Files that start a server but check nothing the registry's dialect can change, each with why:
 * they run once, in `pnpm test`. A file that reads stored state (registry-of.ts, test-registry.ts)
 * or asks which registry the run is for (postgres.ts) cannot be listed (pg-run.test.ts).
 */
export const ONCE: Record<string, string> = {
  "panel-files.test.ts": "the built panel's files as served: compression, caching, revalidation; no request reads the registry",
  "sandbox-sockets.test.ts": "which sockets a sandboxed worker reaches (the worker's view, not what is stored of its job)",
};

/** Whether a test file's text calls one of the entry points. */
export function usesRegistry(text: string): boolean {
  return REGISTRY_ENTRY_POINTS.some((name) => new RegExp(`\\b${name}\\(`).test(text));
}

/** Whether a file starts its own PostgreSQL database and never asks which registry the run is for. */
export function alwaysOnPostgres(text: string): boolean {
  return text.includes("usePostgres(") && !text.includes("registryOnPostgres");
}

/**
 * The files of `dir` (apps/server/test) that `pnpm test:pg` leaves out, as paths under `dir`:
 * those that use no server's registry, those that always use PostgreSQL (they ran the same in
 * `pnpm test`), and those listed in ONCE.
 */
export function leftOutOfPgRun(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".test.ts"))
    .filter((name) => {
      const text = readFileSync(path.join(dir, name), "utf8");
      return !usesRegistry(text) || alwaysOnPostgres(text) || name in ONCE;
    })
    .map((name) => path.join(dir, name));
}
