// Worktree jobs on a runner: the repository is on the runner's machine, so the runner makes the
// worktree when it takes the job, commits what the worker left there, and does the diff, merge
// and discard when the server asks (runner_requests). The runner logs in with its own login
// (runner-role.sql), as docs/runners.md says; the server may not read the runner's folders.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ApiError, Job, JobChanges } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { api, startServer, tempDir, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { usePostgres } from "./postgres.js";
import { query, runnerLoginFor } from "./runner-logins.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";

const postgres = usePostgres();

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" },
  }).trim();

describe.skipIf(!postgres.available)("worktree jobs on a runner", () => {
  let root: string;
  let remoteRoot: string;
  let ownerUrl: string;
  let runnerUrl: string;
  let corral: TestServer;
  let box: RunnerProcess;

  /** A repository on the runner's machine, with one commit on main. */
  function repository(name: string): string {
    const repo = path.join(remoteRoot, name);
    mkdirSync(repo, { recursive: true });
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(path.join(repo, "app.txt"), "one\n");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "start");
    return repo;
  }

  const launch = (prompt: string, workdir: string, more: Record<string, unknown> = {}) =>
    api<Job>(corral, "POST", "/api/jobs", { agent: "sh", prompt, workdir, worktree: true, ...more });
  const ended = async (id: string) => (await corral.services.waits.waitFor([id], 30_000))[0] as Job;

  beforeAll(async () => {
    root = tempDir();
    remoteRoot = path.join(root, "gpu-box");
    mkdirSync(remoteRoot);
    ownerUrl = await postgres.database();
    corral = await startServer({ CORRAL_DATABASE_URL: ownerUrl, CORRAL_WORKDIR_ROOTS: remoteRoot }, { root });
    const created = await api(corral, "POST", "/api/agents", {
      name: "sh",
      kind: "command",
      command: "/bin/sh",
      args: ["-c", "{prompt}"],
      maxConcurrent: 4,
      runnerLabel: "gpu",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const login = await runnerLoginFor(ownerUrl, "gpu-box", ["gpu"]);
    runnerUrl = login.url;
    box = await startRunnerProcess(root, {
      CORRAL_DATABASE_URL: runnerUrl,
      CORRAL_RUNNER_LABELS: "gpu",
      CORRAL_RUNNER_NAME: login.name,
      CORRAL_WORKDIR_ROOTS: remoteRoot,
    });
  }, 60_000);
  afterAll(async () => {
    await box?.stop();
    await corral?.close();
  });

  test("the runner makes the worktree, commits what was left, and does the diff, merge and discard the server asks for", async () => {
    const repo = repository("two");
    const a = await launch(
      "echo by-a > a.txt && git -c user.name=a -c user.email=a@x add a.txt && git -c user.name=a -c user.email=a@x commit -qm 'a adds'",
      repo,
    );
    const b = await launch("printf 'one\\nby b\\n' > app.txt", repo);
    for (const launched of [a, b]) {
      expect(launched.status, JSON.stringify(launched.body)).toBe(201);
      // Made by the runner that takes it: nothing on disk yet, the job names the repository.
      expect(launched.body.worktree).toMatchObject({ state: "pending", branch: `corral/${launched.body.id}`, base: "HEAD", path: "" });
      expect(launched.body.workdir).toBe(repo);
    }
    const [jobA, jobB] = [await ended(a.body.id), await ended(b.body.id)];
    for (const job of [jobA, jobB]) {
      expect(job, JSON.stringify(job)).toMatchObject({ status: "succeeded", runner: box.id });
      const place = path.join(remoteRoot, ".corral-worktrees", "two", job.id);
      expect(job.worktree).toMatchObject({ state: "active", runner: box.id, base: "main", repo, path: place });
      expect(job.workdir).toBe(place);
    }
    // What b's worker left is committed on its branch, on the runner's machine, by Corral.
    expect(git(repo, "log", "-1", "--format=%an %s", `corral/${jobB.id}`)).toBe(`Corral corral: what job ${jobB.id} (sh) left uncommitted`);

    const mcp = await connectMcp(corral, "/mcp?toolsets=worktrees");
    try {
      const done = textOf(await mcp.callTool({ name: "sh_done", arguments: { job_id: jobA.id } }));
      expect(done).toMatch(/^listo\n/);
      expect(done).toContain(`branch corral/${jobA.id} (from main) in ${jobA.worktree?.path}: 1 commit, 1 file changed`);
      expect(done).toMatch(/ {2}[0-9a-f]+ a adds/);
      expect(textOf(await mcp.callTool({ name: "corral_diff", arguments: { job_id: jobB.id } }))).toContain("+by b");

      const changes = await api<JobChanges>(corral, "GET", `/api/jobs/${jobA.id}/diff`);
      expect(changes.status).toBe(200);
      expect(changes.body.diff).toContain("+by-a");
      expect(changes.body.change.files).toBe(1);

      const merged = await api<{ into: string; fastForward: boolean; job: Job }>(
        corral,
        "POST",
        `/api/jobs/${jobA.id}/merge?head=${changes.body.change.head}`,
      );
      expect(merged.status, JSON.stringify(merged.body)).toBe(200);
      expect(merged.body).toMatchObject({ into: "main", fastForward: true, job: { worktree: { state: "merged" } } });
      expect(git(repo, "show", "main:a.txt")).toBe("by-a");
      expect(existsSync(jobA.worktree?.path ?? "")).toBe(false);

      const discarded = textOf(await mcp.callTool({ name: "corral_discard", arguments: { job_id: jobB.id } }));
      expect(discarded).toContain(`corral/${jobB.id}`);
      expect((await api<Job>(corral, "GET", `/api/jobs/${jobB.id}`)).body.worktree).toMatchObject({ state: "discarded" });
      expect(git(repo, "branch", "--list", "corral/*")).toBe("");
      expect(existsSync(jobB.worktree?.path ?? "")).toBe(false);
    } finally {
      await mcp.close();
    }
  });

  test("the policy archives an abandoned worktree on the runner's machine: its folder goes, its branch stays to merge or discard", async () => {
    const repo = repository("abandoned");
    const job = await ended((await launch("echo kept > kept.txt", repo)).body.id);
    expect(job.status).toBe("succeeded");
    const warnings: string[] = [];
    expect(await corral.services.worktrees.archiveAbandoned(1000, Date.now() + 2000, (m) => warnings.push(m))).toContain(job.id);
    expect(warnings).toEqual([]);
    expect((await api<Job>(corral, "GET", `/api/jobs/${job.id}`)).body.worktree).toMatchObject({ state: "archived", runner: box.id });
    expect(existsSync(job.worktree?.path ?? "")).toBe(false);
    expect(git(repo, "show", `corral/${job.id}:kept.txt`)).toBe("kept");
    const diff = await api<JobChanges>(corral, "GET", `/api/jobs/${job.id}/diff`);
    expect(diff.body.diff).toContain("+kept");
    const merged = await api(corral, "POST", `/api/jobs/${job.id}/merge`);
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    expect(git(repo, "show", "main:kept.txt")).toBe("kept");
  });

  test("a workdir that is not a repository, or a base it lacks: the job fails on the runner saying why", async () => {
    const plain = path.join(remoteRoot, "plain");
    mkdirSync(plain);
    const job = await ended((await launch("echo x > x.txt", plain)).body.id);
    expect(job.status).toBe("failed");
    expect(job.error).toMatch(/^the job was not run: its worktree could not be made: .*not .*git repository/);
    const repo = repository("nobase");
    const based = await ended((await launch("echo x > x.txt", repo, { base: "no-such-branch" })).body.id);
    expect(based.error).toMatch(/base no-such-branch is not a branch, tag or commit of/);
    // A base no branch could be named is refused at launch, on the server.
    const refused = await launch("echo", repo, { base: "--upload-pack=touch /tmp/x" });
    expect(refused.status).toBe(400);
    expect((refused.body as unknown as ApiError).field).toBe("base");
  });

  test("the runner's login records the worktree it made and nothing else; the server never runs a runner's worktree", async () => {
    const repo = repository("guarded");
    // A job no runner takes: its agent's label is one this runner does not serve (until the end).
    expect((await api(corral, "PATCH", "/api/agents/sh", { runnerLabel: "elsewhere" })).status).toBe(200);
    const waiting = await launch("echo", repo, { base: "main" });
    expect(waiting.status).toBe(201);
    const id = waiting.body.id;
    const place = path.join(remoteRoot, ".corral-worktrees", "guarded", id);
    const made = (over: Record<string, string>) =>
      JSON.stringify({
        repo,
        gitDir: path.join(repo, ".git"),
        path: place,
        branch: `corral/${id}`,
        base: "main",
        baseCommit: "0".repeat(40),
        state: "active",
        runner: box.id,
        ...over,
      });
    // Each as the runner's own login, on the job once the runner holds it.
    const asRunner = (set: string, params: unknown[]) => query(runnerUrl, `update jobs set ${set} where id = $1`, [id, ...params]);
    await query(ownerUrl, "update jobs set runner = $2, worktree = jsonb_set(worktree, '{state}', '\"pending\"') where id = $1", [id, box.id]);
    for (const [what, set, params] of [
      ["a worktree elsewhere", "worktree = $2::jsonb, workdir = $3", [made({ path: "/tmp/elsewhere" }), "/tmp/elsewhere"]],
      ["a workdir elsewhere", "worktree = $2::jsonb, workdir = $3", [made({}), "/tmp/elsewhere"]],
      ["another base", "worktree = $2::jsonb, workdir = $3", [made({ base: "evil" }), place]],
      ["another runner", "worktree = $2::jsonb, workdir = $3", [made({ runner: "local" }), place]],
      ["a field of another type", "worktree = $2::jsonb, workdir = $3", [JSON.stringify({ ...JSON.parse(made({})), path: [place] }), place]],
      ["the workdir alone", "workdir = $2", ["/tmp/elsewhere"]],
      // Each key the record must have, left out: none may leave a check undecided (NULL).
      ...(["repo", "gitDir", "path", "baseCommit", "runner"] as const).map(
        (key) =>
          [`without ${key}`, "worktree = $2::jsonb, workdir = $3", [JSON.stringify({ ...JSON.parse(made({})), [key]: undefined }), place]] as const,
      ),
      ["another git dir", "worktree = $2::jsonb, workdir = $3", [made({ gitDir: "/etc" }), place]],
      ["a base commit that is none", "worktree = $2::jsonb, workdir = $3", [made({ baseCommit: "HEAD" }), place]],
      ["a repository path with ..", "worktree = $2::jsonb, workdir = $3", [made({ repo: `${repo}/sub/..` }), place]],
      ["no worktree at all", "worktree = NULL, workdir = $2", [place]],
    ] as const) {
      await expect(asRunner(set, [...params]), what).rejects.toThrow(/may not change what the job was launched with/);
    }
    // A job no runner holds yet (runner NULL) takes no record either, however complete: it stays as launched.
    const unclaimed = await launch("echo", repo, { base: "main" });
    for (const record of [made({}), made({ runner: "local" })]) {
      await query(runnerUrl, "update jobs set worktree = $2::jsonb, workdir = $3 where id = $1", [unclaimed.body.id, record, place]).catch(
        () => undefined,
      );
      const [row] = (await query(ownerUrl, "select worktree->>'state' as state, workdir from jobs where id = $1", [unclaimed.body.id])).rows;
      expect(row).toEqual({ state: "pending", workdir: repo });
    }
    // What the runner does make is taken.
    expect((await asRunner("worktree = $2::jsonb, workdir = $3", [made({}), place])).rowCount).toBe(1);
    // Given back to the server (its agent unlabelled), the job is refused there: its worktree is the runner's.
    await query(ownerUrl, "update jobs set runner = null where id = $1", [id]);
    expect((await api(corral, "PATCH", "/api/agents/sh", { runnerLabel: null })).status).toBe(200);
    try {
      const job = await ended(id);
      expect(job.status).toBe("failed");
      expect(job.error).toMatch(/^the job was not run: its worktree .* is on the machine of runner /);
    } finally {
      expect((await api(corral, "PATCH", "/api/agents/sh", { runnerLabel: "gpu" })).status).toBe(200);
    }
  });

  test("a stopped runner's worktree is told as such, never read on the server's machine", async () => {
    const repo = repository("stopped");
    const job = await ended((await launch("echo one > f.txt", repo)).body.id);
    expect(job.status).toBe("succeeded");
    await box.stop();
    const res = await api<ApiError>(corral, "GET", `/api/jobs/${job.id}/diff`);
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(/^job \w+'s worktree is on runner .*, which is stopped; start it again on its machine/);
    expect(res.body.field).toBe("job_id");
  });
});
