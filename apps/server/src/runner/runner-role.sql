-- What a runner's own login may do in the registry (README "Several machines"): read the agents
-- and prices, claim and run jobs, store their attempts, output, file changes, conversations and
-- audit entries, answer requests to browse its workdirs, and announce itself. Nothing else: no browser sessions, MCP tasks or hub
-- messages, no agents, budgets or prices changed, no jobs created or deleted, no tables created.
--
-- As PostgreSQL's superuser (creating a role takes CREATEROLE, which Corral's own login lacks),
-- once the Corral server has created its tables (and again after an upgrade that adds one):
--   sudo -u postgres psql -c "CREATE ROLE corral_runner LOGIN PASSWORD '…'"
--   sudo -u postgres psql corral < apps/server/src/runner/runner-role.sql
GRANT USAGE ON SCHEMA public, drizzle TO corral_runner;
-- A runner checks that the registry's tables are its checkout's (it never migrates them).
GRANT SELECT ON drizzle.__drizzle_migrations TO corral_runner;
GRANT SELECT ON agents, price_overrides, budgets TO corral_runner;
-- Claims lock the job's row (FOR UPDATE), which takes UPDATE.
GRANT SELECT, UPDATE ON jobs TO corral_runner;
GRANT SELECT, INSERT, UPDATE ON runners, job_attempts TO corral_runner;
GRANT SELECT, INSERT, UPDATE, DELETE ON job_files, job_messages TO corral_runner;
GRANT SELECT, INSERT ON job_output, audit_log TO corral_runner;
-- It answers the server's requests to browse the workdirs on its machine.
GRANT SELECT, UPDATE ON runner_requests TO corral_runner;
GRANT USAGE ON SEQUENCE audit_log_id_seq TO corral_runner;
