// `pnpm db:generate --name <what changed>`: a migration for each dialect the registry can live in
// (SQLite in drizzle/, PostgreSQL in drizzle-pg/), from their schemas in apps/server/src/db/.
import { spawnSync } from "node:child_process";

for (const config of ["apps/server/drizzle.config.ts", "apps/server/drizzle-pg.config.ts"]) {
  const run = spawnSync("drizzle-kit", ["generate", "--config", config, ...process.argv.slice(2)], { stdio: "inherit", shell: false });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
