ALTER TABLE "runner_requests" ADD COLUMN "args" text;--> statement-breakpoint
-- Written by hand: a runner makes the worktree of a worktree job it takes (state "pending" until
-- then) and records it, and only that: the branch and base stay the launch's, the record names the
-- runner, the folder is the worktree's own place beside the repository the job was launched in
-- (<parent>/.corral-worktrees/<repo>/<job id>, as worktrees/git-worktree.ts makes it), and the
-- job's workdir becomes that folder. Any other change to the record, or to the workdir, is refused.
CREATE OR REPLACE FUNCTION corral_runner_made_worktree(old_job jobs, new_job jobs) RETURNS boolean LANGUAGE plpgsql STABLE
  SET search_path = public, pg_temp AS $$
DECLARE
  made jsonb := new_job.worktree;
  repo text := made->>'repo';
BEGIN
  IF old_job.worktree->>'state' IS DISTINCT FROM 'pending' OR jsonb_typeof(made) <> 'object' THEN RETURN false; END IF;
  IF EXISTS (SELECT 1 FROM jsonb_each(made) f WHERE f.key NOT IN ('repo', 'gitDir', 'path', 'branch', 'base', 'baseCommit', 'state', 'runner')
      OR jsonb_typeof(f.value) <> 'string') THEN RETURN false; END IF;
  RETURN made->>'state' = 'active'
    AND made->>'branch' = old_job.worktree->>'branch'
    -- HEAD is recorded as the branch it named when the worktree was made.
    AND (made->>'base' = old_job.worktree->>'base' OR (old_job.worktree->>'base' = 'HEAD' AND made->>'base' <> ''))
    AND made->>'runner' = new_job.runner AND new_job.runner IN (SELECT corral_runner_ids())
    AND repo ~ '^/.*[^/]$' AND repo !~ '/\.\.?(/|$)'
    AND (old_job.workdir = repo OR starts_with(old_job.workdir, repo || '/'))
    AND made->>'path' = regexp_replace(repo, '/[^/]+$', '') || '/.corral-worktrees/' || substring(repo from '[^/]+$') || '/' || old_job.id
    AND new_job.workdir = made->>'path';
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION corral_jobs_runner_guard() RETURNS trigger LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  IF NOT row_security_active('public.jobs') THEN RETURN NEW; END IF;
  IF OLD.status NOT IN ('queued', 'running') THEN
    RAISE EXCEPTION 'job % has ended (%); a runner may not change it', OLD.id, OLD.status USING ERRCODE = '42501';
  END IF;
  IF (NEW.id, NEW.agent, NEW.prompt, NEW.model, NEW.timeout_s, NEW.origin, NEW.retry, NEW.max_cost_usd, NEW.max_tokens,
      NEW.created_at, NEW.conversation_id, NEW.follow_up_of, NEW.group_id, NEW.provider, NEW.seq)
    IS DISTINCT FROM (OLD.id, OLD.agent, OLD.prompt, OLD.model, OLD.timeout_s, OLD.origin, OLD.retry, OLD.max_cost_usd, OLD.max_tokens,
      OLD.created_at, OLD.conversation_id, OLD.follow_up_of, OLD.group_id, OLD.provider, OLD.seq) THEN
    RAISE EXCEPTION 'job %: a runner may not change what the job was launched with (agent, prompt, workdir, model, limits)', OLD.id USING ERRCODE = '42501';
  END IF;
  IF (NEW.workdir, NEW.worktree) IS DISTINCT FROM (OLD.workdir, OLD.worktree) AND NOT corral_runner_made_worktree(OLD, NEW) THEN
    RAISE EXCEPTION 'job %: a runner may not change what the job was launched with (agent, prompt, workdir, model, limits), only record the worktree it made for it', OLD.id USING ERRCODE = '42501';
  END IF;
  IF NEW.runner IS DISTINCT FROM OLD.runner AND NOT (OLD.status = 'queued' AND NEW.status = 'queued') THEN
    RAISE EXCEPTION 'job %: a runner may claim or give back a job only while it is queued', OLD.id USING ERRCODE = '42501';
  END IF;
  RETURN NEW;
END $$;
