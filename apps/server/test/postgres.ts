// A database of its own on the test run's private PostgreSQL (postgres-server.ts) for each test
// file, or for each test that asks for a fresh one; dropped when the file ends.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, inject } from "vitest";

export interface TestPostgres {
  /** Whether PostgreSQL runs here; where it does not, the file's tests skip themselves. */
  available: boolean;
  /**
   * A new, empty database; its URL (trust auth, no password). `icuLocale` gives it that locale's
   * collation (en-US: "a" < "B"), as a user's database has; otherwise it compares text as C.
   */
  database(options?: { icuLocale?: string }): Promise<string>;
}

/**
 * Call at the top of a test file. `describe.skipIf(!pg.available)` skips where PostgreSQL is not
 * installed, saying so; with CORRAL_REQUIRE_TOOLS=1 (CI) a missing PostgreSQL fails the file.
 */
export function usePostgres(): TestPostgres {
  const server = inject("postgres");
  if ("missing" in server) {
    if (process.env.CORRAL_REQUIRE_TOOLS === "1") throw new Error(`CORRAL_REQUIRE_TOOLS=1 and ${server.missing}`);
    console.log(`skipped: ${server.missing}`);
    return { available: false, database: () => Promise.reject(new Error(server.missing)) };
  }
  const created: string[] = [];
  afterAll(async () => {
    if (!created.length) return;
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      for (const name of created) await client.query(`drop database if exists "${name}" with (force)`);
    } finally {
      await client.end();
    }
  });
  return {
    available: true,
    async database(options = {}) {
      const url = await createDatabase(server.url, options);
      created.push(new URL(url).pathname.slice(1));
      return url;
    },
  };
}

/**
 * `pnpm test:pg` (CORRAL_TEST_REGISTRY=postgres): every server the integration tests start keeps
 * its registry in PostgreSQL instead of SQLite, one database per data dir (a restarted server finds
 * its jobs again), so the whole suite runs over both dialects.
 */
export const registryOnPostgres = process.env.CORRAL_TEST_REGISTRY === "postgres";

const databaseOf = new Map<string, Promise<string>>();

/** The settings that put a server's registry where this run keeps registries: none for SQLite. */
export async function registryEnv(dataDir: string): Promise<Record<string, string>> {
  if (!registryOnPostgres) return {};
  const server = inject("postgres");
  if ("missing" in server) throw new Error(`CORRAL_TEST_REGISTRY=postgres and ${server.missing}`);
  let url = databaseOf.get(dataDir);
  if (!url) {
    url = createDatabase(server.url);
    databaseOf.set(dataDir, url);
  }
  return { CORRAL_DATABASE_URL: await url };
}

/** A new database on the private PostgreSQL at `serverUrl`; its URL. */
async function createDatabase(serverUrl: string, { icuLocale }: { icuLocale?: string } = {}): Promise<string> {
  const name = `corral_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const locale = icuLocale ? ` template template0 locale_provider icu icu_locale '${icuLocale.replaceAll("'", "''")}'` : "";
    await client.query(`create database "${name}"${locale}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
