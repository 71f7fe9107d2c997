-- What runners' logins may do in the registry (docs/runners.md), granted to the group
-- role corral_runners that each runner's own login is a member of: read the prices and budgets,
-- the agents of its labels and their jobs; claim and run those jobs, store their attempts,
-- output, file changes and conversations; answer requests to browse its workdirs; announce itself
-- under its own name. Which rows are its own is decided by row-level security on its login
-- (drizzle-pg/0007_runner_identity.sql); these grants say which tables and columns it reaches at
-- all. Nothing else: no browser sessions, MCP tasks, hub messages or audit entries, no agents,
-- budgets or prices changed, no job's prompt, workdir or limits changed, no jobs created or
-- deleted, no tables created.
--
-- As PostgreSQL's superuser (creating a role takes CREATEROLE, which Corral's own login lacks),
-- once the Corral server has created its tables, and again after an upgrade:
--   sudo -u postgres psql corral < apps/server/src/runner/runner-role.sql
-- then a login for each runner: `pnpm runner:login <name> <labels>` prints its statements.
DO $$ BEGIN CREATE ROLE corral_runners NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
-- The one login every runner shared before per-runner logins: its table grants go (they let it
-- write any job); it keeps working as one runner once runner:login maps it to a name.
DO $$ BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'corral_runner') THEN
    REVOKE ALL ON ALL TABLES IN SCHEMA public FROM corral_runner;
    REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM corral_runner;
    GRANT corral_runners TO corral_runner;
  END IF;
END $$;
-- Before PostgreSQL 15 every login may create in schema public: a runner's could put a table,
-- or a function or operator that an unqualified name in Corral's statements finds before the
-- built-in one (CVE-2018-1058). Only the registry's owner (whoever owns its jobs table) creates there.
DO $$ DECLARE owner name := (SELECT tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename = 'jobs');
BEGIN
  IF has_schema_privilege('public', 'public', 'CREATE') THEN
    REVOKE CREATE ON SCHEMA public FROM PUBLIC;
    IF owner IS NOT NULL THEN EXECUTE format('GRANT CREATE ON SCHEMA public TO %I', owner); END IF;
  END IF;
END $$;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM corral_runners;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM corral_runners;
GRANT USAGE ON SCHEMA public, drizzle TO corral_runners;
-- A runner checks that the registry's tables are its checkout's (it never migrates them).
GRANT SELECT ON drizzle.__drizzle_migrations TO corral_runners;
GRANT SELECT ON agents, price_overrides, budgets, jobs TO corral_runners;
-- A job's state as it runs; what it was launched with is not among these columns (workdir and
-- worktree only as the worktree it makes for a worktree job: the trigger of
-- drizzle-pg/0013_runner_worktrees.sql holds them to that). Claims lock the job's row (FOR UPDATE),
-- which takes UPDATE on one column.
GRANT UPDATE (runner, status, attempt, pid, pid_start, invocation, started_at, ended_at, exit_code, error, final_text, output_bytes, workdir, worktree,
  usage_model, input_tokens, output_tokens, cached_input_tokens, cost_usd, cost_source, worker_session, killed_at,
  cancel_requested_at, cancelled_by, cancel_client) ON jobs TO corral_runners;
GRANT SELECT, INSERT ON runners TO corral_runners;
GRANT UPDATE (heartbeat_at, stopped_at) ON runners TO corral_runners;
GRANT SELECT, INSERT, UPDATE ON job_attempts TO corral_runners;
GRANT SELECT, INSERT, UPDATE, DELETE ON job_files, job_messages TO corral_runners;
GRANT SELECT, INSERT ON job_output TO corral_runners;
-- It answers the server's requests to browse the workdirs on its machine.
GRANT SELECT ON runner_requests TO corral_runners;
GRANT UPDATE (answered_at, answer, error) ON runner_requests TO corral_runners;
