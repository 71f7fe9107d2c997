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
  repo text;
BEGIN
  -- Every answer below is true or false, never NULL: a NULL would let the guard's test pass.
  IF old_job.worktree IS NULL OR old_job.worktree->>'state' IS DISTINCT FROM 'pending' THEN RETURN false; END IF;
  IF made IS NULL OR jsonb_typeof(made) IS DISTINCT FROM 'object' OR new_job.runner IS NULL OR new_job.workdir IS NULL THEN RETURN false; END IF;
  -- Exactly the record createWorktree makes, every field a string.
  IF NOT (made ?& array['repo', 'gitDir', 'path', 'branch', 'base', 'baseCommit', 'state', 'runner']) THEN RETURN false; END IF;
  IF EXISTS (SELECT 1 FROM jsonb_each(made) f WHERE f.key NOT IN ('repo', 'gitDir', 'path', 'branch', 'base', 'baseCommit', 'state', 'runner')
      OR jsonb_typeof(f.value) IS DISTINCT FROM 'string') THEN RETURN false; END IF;
  repo := made->>'repo';
  RETURN coalesce(
    made->>'state' = 'active'
    AND made->>'branch' = old_job.worktree->>'branch'
    -- HEAD is recorded as the branch it named when the worktree was made.
    AND (made->>'base' = old_job.worktree->>'base' OR (old_job.worktree->>'base' = 'HEAD' AND made->>'base' <> ''))
    AND made->>'baseCommit' ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'
    AND made->>'runner' = new_job.runner AND new_job.runner IN (SELECT corral_runner_ids())
    -- An absolute, plain path: no empty, `.` or `..` part, no trailing slash.
    AND repo ~ '^(/[^/]+)+$' AND repo !~ '/\.\.?(/|$)'
    AND made->>'gitDir' = repo || '/.git'
    AND (old_job.workdir = repo OR starts_with(old_job.workdir, repo || '/'))
    AND made->>'path' = regexp_replace(repo, '/[^/]+$', '') || '/.corral-worktrees/' || substring(repo from '[^/]+$') || '/' || old_job.id
    AND new_job.workdir = made->>'path',
    false);
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
  IF (NEW.workdir, NEW.worktree) IS DISTINCT FROM (OLD.workdir, OLD.worktree) AND corral_runner_made_worktree(OLD, NEW) IS NOT TRUE THEN
    RAISE EXCEPTION 'job %: a runner may not change what the job was launched with (agent, prompt, workdir, model, limits), only record the worktree it made for it', OLD.id USING ERRCODE = '42501';
  END IF;
  IF NEW.runner IS DISTINCT FROM OLD.runner AND NOT (OLD.status = 'queued' AND NEW.status = 'queued') THEN
    RAISE EXCEPTION 'job %: a runner may claim or give back a job only while it is queued', OLD.id USING ERRCODE = '42501';
  END IF;
  RETURN NEW;
END $$;
