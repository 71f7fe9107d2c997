-- Written by hand (drizzle-kit cannot create an extension): the jobs list's text search
-- (apps/server/src/db/pg/repos/job-list.ts), what jobs_search is in SQLite (drizzle/0008). Each
-- job's id, prompt and error, folded to lower case through ICU (the same in every database
-- locale, non-ASCII letters too) and indexed by trigram. pg_trgm is a trusted extension: a user
-- who may create tables in the database may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE INDEX "jobs_search_idx" ON "jobs" USING gin (
  lower("id" COLLATE "und-x-icu") gin_trgm_ops,
  lower("prompt" COLLATE "und-x-icu") gin_trgm_ops,
  lower("error" COLLATE "und-x-icu") gin_trgm_ops
);
