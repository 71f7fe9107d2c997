-- Written by hand (drizzle-kit makes neither policies, functions nor triggers): what a runner's
-- login may see and change, decided by PostgreSQL itself (README "Several machines", "Security").
-- Each runner logs in as a role of its own; runner_logins, written by the registry's owner only,
-- says which runner name a login is and which labels it may serve. Row-level security then keys
-- every table a runner reaches on that login (session_user, which SET ROLE does not change):
-- the agents of its labels, their jobs, the jobs and requests of runners registered under its
-- name. The registry's owner (the Corral server) and superusers are not subject to it.
-- runner-role.sql grants the privileges these rows are filtered for.
CREATE TABLE "runner_logins" (
	"login" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL UNIQUE CHECK ("name" <> '' AND lower("name") <> 'local'),
	"labels" text[] NOT NULL
);--> statement-breakpoint
-- No policy: a runner reads its own row only through corral_runner_name() and corral_runner_labels().
ALTER TABLE "runner_logins" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE FUNCTION corral_runner_name() RETURNS text LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT "name" FROM runner_logins WHERE "login" = session_user $$;--> statement-breakpoint
CREATE FUNCTION corral_runner_labels() RETURNS text[] LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT coalesce((SELECT labels FROM runner_logins WHERE "login" = session_user), '{}') $$;--> statement-breakpoint
-- The ids this login's runner took at its starts (each start is a new id under the same name).
CREATE FUNCTION corral_runner_ids() RETURNS SETOF text LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT r.id FROM runners r JOIN runner_logins l ON l."name" = r."name" WHERE l."login" = session_user $$;--> statement-breakpoint
-- Whether every label of a runners row (jsonb) is one this login may serve.
CREATE FUNCTION corral_runner_may_serve(labels jsonb) RETURNS boolean LANGUAGE sql STABLE SET search_path = public, pg_temp
  AS $$ SELECT jsonb_typeof(labels) = 'array'
    AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(labels) l WHERE jsonb_typeof(l) <> 'string' OR NOT (l #>> '{}') = ANY (corral_runner_labels())) $$;--> statement-breakpoint
ALTER TABLE "agents" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY "runner_reads_its_agents" ON "agents" FOR SELECT USING ("runner_label" = ANY (corral_runner_labels()));--> statement-breakpoint
ALTER TABLE "runners" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY "runner_reads_its_name" ON "runners" FOR SELECT USING ("name" = corral_runner_name());--> statement-breakpoint
CREATE POLICY "runner_registers_as_itself" ON "runners" FOR INSERT
  WITH CHECK ("name" = corral_runner_name() AND "id" <> 'local' AND "stopped_at" IS NULL AND corral_runner_may_serve("labels"));--> statement-breakpoint
CREATE POLICY "runner_heartbeats_as_itself" ON "runners" FOR UPDATE USING ("name" = corral_runner_name())
  WITH CHECK ("name" = corral_runner_name() AND corral_runner_may_serve("labels"));--> statement-breakpoint
ALTER TABLE "jobs" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY "runner_reads_its_jobs" ON "jobs" FOR SELECT
  USING ("agent" IN (SELECT "name" FROM agents) OR "runner" IN (SELECT corral_runner_ids()));--> statement-breakpoint
-- Its own jobs, and unclaimed queued jobs of its labels' agents (a claim; a release gives one back).
CREATE POLICY "runner_writes_its_jobs" ON "jobs" FOR UPDATE
  USING ("runner" IN (SELECT corral_runner_ids()) OR ("runner" IS NULL AND "status" = 'queued' AND "agent" IN (SELECT "name" FROM agents)))
  WITH CHECK ("runner" IN (SELECT corral_runner_ids()) OR ("runner" IS NULL AND "status" = 'queued' AND "agent" IN (SELECT "name" FROM agents)));--> statement-breakpoint
-- What rows cannot say: a runner never changes what the job was launched with, never touches a
-- job that has ended, and moves a job between runners (claim, release) only while it waits.
CREATE FUNCTION corral_jobs_runner_guard() RETURNS trigger LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  IF NOT row_security_active('public.jobs') THEN RETURN NEW; END IF;
  IF OLD.status NOT IN ('queued', 'running') THEN
    RAISE EXCEPTION 'job % has ended (%); a runner may not change it', OLD.id, OLD.status USING ERRCODE = '42501';
  END IF;
  IF (NEW.id, NEW.agent, NEW.prompt, NEW.workdir, NEW.model, NEW.timeout_s, NEW.origin, NEW.retry, NEW.max_cost_usd, NEW.max_tokens,
      NEW.created_at, NEW.conversation_id, NEW.follow_up_of, NEW.group_id, NEW.provider, NEW.seq)
    IS DISTINCT FROM (OLD.id, OLD.agent, OLD.prompt, OLD.workdir, OLD.model, OLD.timeout_s, OLD.origin, OLD.retry, OLD.max_cost_usd, OLD.max_tokens,
      OLD.created_at, OLD.conversation_id, OLD.follow_up_of, OLD.group_id, OLD.provider, OLD.seq) THEN
    RAISE EXCEPTION 'job %: a runner may not change what the job was launched with (agent, prompt, workdir, model, limits)', OLD.id USING ERRCODE = '42501';
  END IF;
  IF NEW.runner IS DISTINCT FROM OLD.runner AND NOT (OLD.status = 'queued' AND NEW.status = 'queued') THEN
    RAISE EXCEPTION 'job %: a runner may claim or give back a job only while it is queued', OLD.id USING ERRCODE = '42501';
  END IF;
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE TRIGGER "jobs_runner_guard" BEFORE UPDATE ON "jobs" FOR EACH ROW EXECUTE FUNCTION corral_jobs_runner_guard();--> statement-breakpoint
ALTER TABLE "job_attempts" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY "runner_its_jobs" ON "job_attempts"
  USING ("job_id" IN (SELECT "id" FROM jobs WHERE "runner" IN (SELECT corral_runner_ids())))
  WITH CHECK ("job_id" IN (SELECT "id" FROM jobs WHERE "runner" IN (SELECT corral_runner_ids())));--> statement-breakpoint
ALTER TABLE "job_files" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY "runner_its_jobs" ON "job_files"
  USING ("job_id" IN (SELECT "id" FROM jobs WHERE "runner" IN (SELECT corral_runner_ids())))
  WITH CHECK ("job_id" IN (SELECT "id" FROM jobs WHERE "runner" IN (SELECT corral_runner_ids())));--> statement-breakpoint
ALTER TABLE "job_messages" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY "runner_its_jobs" ON "job_messages"
  USING ("job_id" IN (SELECT "id" FROM jobs WHERE "runner" IN (SELECT corral_runner_ids())))
  WITH CHECK ("job_id" IN (SELECT "id" FROM jobs WHERE "runner" IN (SELECT corral_runner_ids())));--> statement-breakpoint
ALTER TABLE "job_output" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY "runner_its_jobs" ON "job_output"
  USING ("job_id" IN (SELECT "id" FROM jobs WHERE "runner" IN (SELECT corral_runner_ids())))
  WITH CHECK ("job_id" IN (SELECT "id" FROM jobs WHERE "runner" IN (SELECT corral_runner_ids())));--> statement-breakpoint
ALTER TABLE "runner_requests" ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY "runner_its_requests" ON "runner_requests"
  USING ("runner" IN (SELECT corral_runner_ids())) WITH CHECK ("runner" IN (SELECT corral_runner_ids()));--> statement-breakpoint
-- An answer is at most 32 MiB (the largest a runner writes is a 4 MiB read, escaped as JSON); the
-- server caps each kind lower as it reads (workdirs/runner-answers.ts). Rows already stored are
-- transient requests and are not checked.
ALTER TABLE "runner_requests" ADD CONSTRAINT "runner_requests_answer_size"
  CHECK (octet_length("answer") <= 33554432 AND octet_length("error") <= 65536) NOT VALID;--> statement-breakpoint
-- A chunk of output is at most 16 MiB (a runner stores what a pipe read gave, 64 KiB at most, or
-- what an in-process agent streamed): the server copies them a page at a time (repos/job-output.ts).
ALTER TABLE "job_output" ADD CONSTRAINT "job_output_data_size" CHECK (octet_length("data") <= 16777216) NOT VALID;--> statement-breakpoint
-- Runners write no audit entries (the server audits what clients ask); none of its rows are theirs.
ALTER TABLE "audit_log" ENABLE ROW LEVEL SECURITY;
