-- Written by hand: the runner guard of drizzle-pg/0013 again, with relaunch_of among what a job
-- was launched with, so a runner's login may never set or change which job a job relaunched
-- (runner-role.sql grants it no UPDATE on the column either: this holds should a grant widen).
ALTER TABLE "jobs" ADD COLUMN "relaunch_of" text;--> statement-breakpoint
CREATE INDEX "jobs_relaunch_idx" ON "jobs" USING btree ("relaunch_of","seq");--> statement-breakpoint
CREATE OR REPLACE FUNCTION corral_jobs_runner_guard() RETURNS trigger LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  IF NOT row_security_active('public.jobs') THEN RETURN NEW; END IF;
  IF OLD.status NOT IN ('queued', 'running') THEN
    RAISE EXCEPTION 'job % has ended (%); a runner may not change it', OLD.id, OLD.status USING ERRCODE = '42501';
  END IF;
  IF (NEW.id, NEW.agent, NEW.prompt, NEW.model, NEW.timeout_s, NEW.origin, NEW.retry, NEW.max_cost_usd, NEW.max_tokens,
      NEW.created_at, NEW.conversation_id, NEW.follow_up_of, NEW.group_id, NEW.relaunch_of, NEW.provider, NEW.seq)
    IS DISTINCT FROM (OLD.id, OLD.agent, OLD.prompt, OLD.model, OLD.timeout_s, OLD.origin, OLD.retry, OLD.max_cost_usd, OLD.max_tokens,
      OLD.created_at, OLD.conversation_id, OLD.follow_up_of, OLD.group_id, OLD.relaunch_of, OLD.provider, OLD.seq) THEN
    RAISE EXCEPTION 'job %: a runner may not change what the job was launched with (agent, prompt, workdir, model, limits)', OLD.id USING ERRCODE = '42501';
  END IF;
  IF (NEW.workdir, NEW.worktree) IS DISTINCT FROM (OLD.workdir, OLD.worktree) AND corral_runner_made_worktree(OLD, NEW) IS NOT TRUE THEN
    RAISE EXCEPTION 'job %: a runner may not change what the job was launched with (agent, prompt, workdir, model, limits), only record the worktree it made for it', OLD.id USING ERRCODE = '42501';
  END IF;
  IF NEW.runner IS DISTINCT FROM OLD.runner AND NOT (OLD.status = 'queued' AND NEW.status = 'queued') THEN
    RAISE EXCEPTION 'job %: a runner may claim or give back a job only while it is queued', OLD.id USING ERRCODE = '42501';
  END IF;
  RETURN NEW;
END $$;
