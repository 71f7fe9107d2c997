-- The server became the built-in runner `local`: the jobs it ran, runs or holds in its queue are
-- its runner's. A job of an agent with a runner label that never started (waiting for a runner, or
-- cancelled while it waited) ran nowhere and stays unclaimed, as this version stores it.
UPDATE `jobs` SET `runner` = 'local'
WHERE `runner` IS NULL
  AND (`agent` NOT IN (SELECT `name` FROM `agents` WHERE `runner_label` IS NOT NULL)
    OR (`status` <> 'queued' AND `started_at` IS NOT NULL));
