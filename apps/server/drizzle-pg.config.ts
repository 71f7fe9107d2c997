import { defineConfig } from "drizzle-kit";

// The registry's PostgreSQL migrations (CORRAL_DATABASE_URL); drizzle.config.ts has SQLite's.
export default defineConfig({
  dialect: "postgresql",
  schema: "./apps/server/src/db/pg/schema.ts",
  out: "./drizzle-pg",
});
