-- Written by hand (drizzle-kit cannot create an extension or a function): the jobs list's text
-- search (apps/server/src/db/pg/repos/job-list.ts), what jobs_search is in SQLite (drizzle/0008).
-- Each job's id, prompt and error is folded to lower case through ICU (the same in every database
-- locale, non-ASCII letters too) and indexed twice: by trigram (pg_trgm, for three characters and
-- more) and by its characters and pairs of characters (for one or two, which trigrams cannot
-- find). pg_trgm is a trusted extension: a user who may create tables may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE FUNCTION corral_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT lower(t COLLATE "und-x-icu") $$;--> statement-breakpoint
-- Every character and every pair of neighbouring characters (repeats are dropped by the index).
-- Its cost tells the planner to read the index rather than work the pieces out row by row.
CREATE FUNCTION corral_short_grams(t text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 10000
  AS $$ SELECT string_to_array(t, NULL)
    || array(SELECT m[1] FROM regexp_matches(t, '..', 'g') m)
    || array(SELECT m[1] FROM regexp_matches(substr(t, 2), '..', 'g') m) $$;--> statement-breakpoint
CREATE INDEX "jobs_search_idx" ON "jobs" USING gin (
  corral_fold("id") gin_trgm_ops, corral_fold("prompt") gin_trgm_ops, corral_fold("error") gin_trgm_ops
);--> statement-breakpoint
CREATE INDEX "jobs_search_short_idx" ON "jobs" USING gin (
  corral_short_grams(corral_fold("id")), corral_short_grams(corral_fold("prompt")), corral_short_grams(corral_fold("error"))
);
