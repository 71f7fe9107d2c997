-- Written by hand: what a job's and an attempt's usage may be. A runner's login writes these
-- columns for the jobs it holds, and a budget sums them (costs/service.ts): a negative cost or
-- token count, NaN (which no comparison finds over a limit) or an infinity would undo a budget for
-- every job after it. PostgreSQL orders NaN above Infinity, so "< 'Infinity'" refuses both.
-- Rows already stored are not checked (NOT VALID): the server never wrote such values.
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_usage_bounds" CHECK (
  ("cost_usd" IS NULL OR ("cost_usd" >= 0 AND "cost_usd" < 'Infinity'::float8))
  AND coalesce("input_tokens", 0) >= 0 AND coalesce("output_tokens", 0) >= 0 AND coalesce("cached_input_tokens", 0) >= 0
) NOT VALID;--> statement-breakpoint
ALTER TABLE "job_attempts" ADD CONSTRAINT "job_attempts_usage_bounds" CHECK (
  ("cost_usd" IS NULL OR ("cost_usd" >= 0 AND "cost_usd" < 'Infinity'::float8))
  AND coalesce("input_tokens", 0) >= 0 AND coalesce("output_tokens", 0) >= 0 AND coalesce("cached_input_tokens", 0) >= 0
) NOT VALID;
