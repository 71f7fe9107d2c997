// A runner under a login of its own with only what apps/server/src/runner/runner-role.sql grants:
// it runs jobs end to end, and the rest of the registry (browser sessions, agents, creating jobs
// or tables) is refused to it by PostgreSQL itself.
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { DirListing, Job, JobFiles, OutputPage } from "@corral/shared";
import { api, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { failedRunnerStart, startRunnerProcess } from "./runner-process.js";
import { query, runnerLoginFor } from "./runner-logins.js";
const postgres = usePostgres();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!postgres.available)("a runner's own login (runner-role.sql)", () => {
  test("runs jobs end to end with only the grants it is given, and is refused the rest of the registry", async () => {
    const root = tempDir();
    const owner = await postgres.database();
    const corral: TestServer = await startServer({ CORRAL_DATABASE_URL: owner }, { root });
    cleanups.push(() => corral.close());
    const login = await runnerLoginFor(owner, "box", ["gpu"]);
    const runnerUrl = login.url;

    await api(corral, "PATCH", "/api/agents/kiro", { runnerLabel: "gpu" });
    const box = await startRunnerProcess(root, { CORRAL_DATABASE_URL: runnerUrl, CORRAL_RUNNER_LABELS: "gpu", CORRAL_RUNNER_NAME: login.name });
    cleanups.push(() => box.stop("SIGKILL"));
    const job = await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "print 2\nwrite made.txt ok", workdir: path.join(root, "w") });
    const [ended] = await corral.services.waits.waitFor([job.body.id], 15_000);
    expect(ended).toMatchObject({ status: "succeeded", runner: box.id });
    const output = await api<OutputPage>(corral, "GET", `/api/jobs/${job.body.id}/output?cursor=0`);
    expect(output.body.chunks.map((c) => c.text).join("")).toContain("line 2");
    expect((await api<JobFiles>(corral, "GET", `/api/jobs/${job.body.id}/files`)).body.files).toMatchObject([
      { path: "made.txt", change: "created" },
    ]);
    // Its workdir is browsed through it (the request and the answer go through the registry).
    const listing = await api<DirListing>(corral, "GET", `/api/workdirs/list?path=${encodeURIComponent(path.join(root, "w"))}`);
    expect(listing.status).toBe(200);
    expect(listing.body.entries.map((e) => e.name)).toContain("made.txt");
    const long = await api<Job>(corral, "POST", "/api/jobs", { agent: "kiro", prompt: "sleep 30", workdir: path.join(root, "l") });
    await until(
      async () => ((await api<Job>(corral, "GET", `/api/jobs/${long.body.id}`)).body.status === "running" ? true : undefined),
      10_000,
      "started",
    );
    expect((await api<Job>(corral, "POST", `/api/jobs/${long.body.id}/cancel`)).body.status).toBe("cancelled");
    expect(await box.stop()).toBe(0);
    expect(box.stderr()).toBe("");

    for (const statement of [
      "select * from browser_sessions",
      "select * from mcp_tasks",
      "update agents set enabled = false",
      "delete from jobs",
      `insert into jobs (id) values ('x')`,
      "update budgets set max_cost_usd = 0",
      "create table mine (a int)",
    ]) {
      await expect(query(runnerUrl, statement), statement).rejects.toMatchObject({ code: "42501" });
    }
  });

  test("a runner refuses a registry whose tables are not its checkout's, saying what to start or update", async () => {
    const root = tempDir();
    const empty = await postgres.database();
    const none = await failedRunnerStart(root, { CORRAL_DATABASE_URL: empty, CORRAL_RUNNER_LABELS: "gpu" });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/has no Corral tables: start the Corral server of this version on it first/);

    const newer = await postgres.database();
    const corral = await startServer({ CORRAL_DATABASE_URL: newer }, { root });
    await corral.close();
    await query(newer, `insert into drizzle.__drizzle_migrations (hash, created_at) values ('from-a-later-version', ${Date.now() + 10 ** 9})`);
    const later = await failedRunnerStart(root, { CORRAL_DATABASE_URL: newer, CORRAL_RUNNER_LABELS: "gpu" });
    expect(later.code).toBe(1);
    expect(later.stderr).toMatch(/newer Corral tables than this checkout knows: update it/);
  });
});
