-- The server became the built-in runner `local`: the jobs it ran, runs or holds in its queue are
-- its runner's. A job that waits for a runner (queued, of an agent with a runner label) stays unclaimed.
UPDATE "jobs" SET "runner" = 'local'
WHERE "runner" IS NULL
  AND ("status" <> 'queued' OR "agent" NOT IN (SELECT "name" FROM "agents" WHERE "runner_label" IS NOT NULL));
