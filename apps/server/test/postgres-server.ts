// vitest globalSetup: one private PostgreSQL for the whole test run (private-postgres.ts), started
// once before the first test file and stopped after the last. Test files ask it for a database of
// their own through usePostgres() (postgres.ts). Where PostgreSQL is not installed, the run goes on
// without it and the files that need it skip themselves (unless CORRAL_REQUIRE_TOOLS=1).
import type { TestProject } from "vitest/node";
import { startPrivatePostgres } from "./private-postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The admin URL of the run's PostgreSQL, or why there is none. */
    postgres: { url: string } | { missing: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPrivatePostgres();
  if ("missing" in server) {
    project.provide("postgres", server);
    return async () => {};
  }
  project.provide("postgres", { url: server.url });
  return server.stop;
}
