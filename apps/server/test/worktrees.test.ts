import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Job, JobChanges } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { holdWorktree } from "../src/worktrees/worktree-locks.js";
import { api, startServer, type TestServer } from "./helpers.js";
import { hasBwrap } from "./required-tool.js";
import { connectMcp, textOf } from "./mcp-client.js";

// Worktree jobs end to end: a real server, real git, a shell agent whose prompt is its script.
let server: TestServer;
let client: Client;
beforeAll(async () => {
  server = await startServer();
  client = await connectMcp(server, "/mcp?toolsets=worktrees");
  const created = await api(server, "POST", "/api/agents", {
    name: "sh",
    kind: "command",
    command: "/bin/sh",
    args: ["-c", "{prompt}"],
    maxConcurrent: 8,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" },
  }).trim();

function repository(name: string): string {
  const repo = path.join(server.root, name);
  mkdirSync(repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(path.join(repo, "app.txt"), "one\ntwo\nthree\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "start");
  return repo;
}

const call = async (name: string, args: Record<string, unknown>) => textOf(await client.callTool({ name, arguments: args }));
const jobOf = async (id: string) => (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;

describe("worktree jobs", () => {
  test("three agents on one repository at once: branches with their diff stats; one merges, one conflicts, one is discarded", async () => {
    const repo = repository("three");
    const scripts = [
      "printf 'one\\nTWO by a\\nthree\\n' > app.txt && git -c user.name=a -c user.email=a@x commit -qam 'a edits'",
      "printf 'one\\nTWO by b\\nthree\\n' > app.txt && echo b > b.txt",
      "echo c >> app.txt",
    ];
    const ids = await Promise.all(scripts.map(async (prompt) => (await call("sh_run_async", { prompt, workdir: repo, worktree: true })).trim()));
    for (const id of ids) expect(id).toMatch(/^[a-z0-9]{12}$/);
    const waited = await call("corral_wait", { job_ids: ids });
    expect(waited).toMatch(/^all 3 ended/);
    for (const id of ids) expect(waited).toContain(`branch corral/${id} (from main) in ${path.join(server.root, ".corral-worktrees", "three", id)}`);
    expect(waited).toMatch(/1 commit, 1 file changed \(1 file changed, 1 insertion\(\+\), 1 deletion\(-\)\)/);
    expect(waited).toMatch(/1 commit, 2 files changed \(2 files changed, 2 insertions\(\+\), 1 deletion\(-\)\)/);
    // What the worker left uncommitted is on its branch, by Corral.
    const [a, b, c] = ids as [string, string, string];
    expect(git(repo, "log", "-1", "--format=%an %s", `corral/${b}`)).toBe(`Corral corral: what job ${b} (sh) left uncommitted`);
    const done = await call("sh_done", { job_id: a });
    expect(done).toMatch(/^listo\n/);
    expect(done).toMatch(/ {2}[0-9a-f]+ a edits/);
    expect(done).toMatch(/app\.txt \| 2 \+-/);
    expect(await call("corral_diff", { job_id: a })).toContain("+TWO by a");

    expect(await call("corral_merge", { job_id: a })).toMatch(
      new RegExp(`^merged corral/${a} into main \\(fast-forward, [0-9a-f]{12}\\); its worktree is removed$`),
    );
    expect(await call("corral_merge", { job_id: b })).toMatch(
      /^error: job_id: corral\/\w+ does not merge cleanly into main: app\.txt; nothing was merged/,
    );
    // What goes with the branch is said, and how to bring it back.
    const discarded = await call("corral_discard", { job_id: c });
    expect(discarded).toMatch(
      new RegExp(
        `^discarded corral/${c} and its worktree, with 1 commit its base lacks:\n {2}[0-9a-f]+ corral: what job ${c} \\(sh\\) left uncommitted\n`,
      ),
    );
    const head = /git branch corral\/\w+ ([0-9a-f]{40})$/.exec(discarded)?.[1];
    expect(git(repo, "cat-file", "-t", head ?? "missing")).toBe("commit");

    expect(git(repo, "log", "--format=%s", "main")).toBe("a edits\nstart");
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(readFileSync(path.join(repo, "app.txt"), "utf8")).toBe("one\nTWO by a\nthree\n");
    expect(git(repo, "branch", "--list", "--format=%(refname:short)", "corral/*")).toBe(`corral/${b}`);
    expect(existsSync((await jobOf(c)).workdir)).toBe(false);
    expect((await jobOf(a)).worktree).toMatchObject({ state: "merged", branch: `corral/${a}` });
    expect((await jobOf(c)).worktree?.state).toBe("discarded");
    expect(await call("corral_merge", { job_id: c })).toMatch(/^error: job_id: job \w+'s worktree was already discarded/);
  }, 120_000);

  test("over REST: the change and diff, refusals that name the field, merge refused while running", async () => {
    const repo = repository("rest");
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "sh", prompt: "echo new > new.txt", workdir: repo, worktree: true });
    expect(launched.status, JSON.stringify(launched.body)).toBe(201);
    expect(launched.body.worktree).toMatchObject({ repo, base: "main", state: "active", branch: `corral/${launched.body.id}` });
    expect(launched.body.workdir).toBe(launched.body.worktree?.path);
    await server.services.waits.waitFor([launched.body.id], 60_000);
    const changes = await api<JobChanges>(server, "GET", `/api/jobs/${launched.body.id}/diff`);
    expect(changes.body).toMatchObject({ change: { files: 1, commits: [expect.stringMatching(/left uncommitted$/)] }, truncated: false });
    expect(changes.body.diff).toMatch(/^diff --git a\/new\.txt b\/new\.txt\nnew file mode/);
    expect((await api(server, "GET", `/api/jobs/${launched.body.id}/diff?path=../x`)).body).toMatchObject({ field: "path" });

    const plain = path.join(server.root, "plain");
    mkdirSync(plain);
    const refusals: [Record<string, unknown>, string, RegExp][] = [
      [{ workdir: plain, worktree: true }, "workdir", /is not in a git repository/],
      [{ workdir: repo, worktree: true, base: "--orphan" }, "base", /is not a branch, tag or commit name/],
      [{ workdir: repo, worktree: true, base: "nope" }, "base", /is not a branch, tag or commit of/],
      [{ workdir: repo, base: "main" }, "base", /pass worktree: true with it/],
      [{ workdir: repo, worktree: true, sharedWorkdir: true }, "worktree", /leave out shared_workdir/],
    ];
    for (const [body, field, error] of refusals) {
      const res = await api<{ field: string; error: string }>(server, "POST", "/api/jobs", { agent: "sh", prompt: "true", ...body });
      expect({ status: res.status, field: res.body.field }, JSON.stringify(body)).toEqual({ status: 400, field });
      expect(res.body.error).toMatch(error);
    }
    const notWorktree = await api<Job>(server, "POST", "/api/jobs", { agent: "sh", prompt: "true", workdir: plain });
    await server.services.waits.waitFor([notWorktree.body.id], 60_000);
    expect((await api(server, "GET", `/api/jobs/${notWorktree.body.id}/diff`)).body).toMatchObject({
      error: expect.stringMatching(/did not run in a worktree/),
    });
    const running = await api<Job>(server, "POST", "/api/jobs", { agent: "sh", prompt: "sleep 30", workdir: repo, worktree: true });
    expect((await api(server, "POST", `/api/jobs/${running.body.id}/merge`)).status).toBe(409);
    await api(server, "POST", `/api/jobs/${running.body.id}/cancel`);
    await server.services.waits.waitFor([running.body.id], 60_000);
    const discarded = await api<{ branch: string; commits: string[]; head: string; job: Job }>(
      server,
      "POST",
      `/api/jobs/${running.body.id}/discard`,
    );
    expect(discarded.body).toMatchObject({ branch: `corral/${running.body.id}`, commits: [], job: { worktree: { state: "discarded" } } });
    // The record keeps where the branch pointed and when; the audit trail who asked, through which door.
    expect(discarded.body.job.worktree).toMatchObject({ head: discarded.body.head, changedAt: expect.any(Number) });
    const audit = await api<{ entries: { action: string; door: string }[] }>(server, "GET", `/api/audit?jobId=${running.body.id}`);
    expect(audit.body.entries.map((e) => [e.action, e.door])).toContainEqual(["discard", "rest"]);
  }, 120_000);

  test("two merges into one repository at once take turns: both land, the second as a merge commit", async () => {
    const repo = repository("turns");
    const launched = await Promise.all(
      ["echo a > a.txt", "echo b > b.txt"].map(
        async (prompt) => (await api<Job>(server, "POST", "/api/jobs", { agent: "sh", prompt, workdir: repo, worktree: true })).body.id,
      ),
    );
    await server.services.waits.waitFor(launched, 60_000);
    const merged = await Promise.all(launched.map((id) => api<{ fastForward: boolean }>(server, "POST", `/api/jobs/${id}/merge`)));
    expect(merged.map((m) => m.status)).toEqual([200, 200]);
    // The second to take its turn finds the base moved: a merge commit.
    expect(merged.some((m) => m.body.fastForward === false)).toBe(true);
    expect(git(repo, "ls-tree", "--name-only", "main")).toBe("a.txt\napp.txt\nb.txt");
    expect(git(repo, "status", "--porcelain")).toBe("");
  }, 120_000);

  test("a follow-up continues in its earlier turn's worktree, on the same branch", async () => {
    const repo = repository("followup");
    const first = await api<Job>(server, "POST", "/api/jobs", { agent: "claude", prompt: "write a.txt first", workdir: repo, worktree: true });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    await server.services.waits.waitFor([first.body.id], 60_000);
    const next = await api<Job>(server, "POST", "/api/jobs", { agent: "claude", prompt: "write b.txt second", session: first.body.id });
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    expect(next.body.worktree).toEqual(first.body.worktree);
    expect(next.body.workdir).toBe(first.body.workdir);
    await server.services.waits.waitFor([next.body.id], 60_000);
    expect(git(repo, "show", "--name-only", "--format=", `corral/${first.body.id}`)).toBe("b.txt");
    expect(git(repo, "ls-tree", "--name-only", `corral/${first.body.id}`)).toBe("a.txt\napp.txt\nb.txt");
    // Once discarded, its conversation cannot go on there.
    await api(server, "POST", `/api/jobs/${first.body.id}/discard`);
    const after = await api<{ field: string; error: string }>(server, "POST", "/api/jobs", {
      agent: "claude",
      prompt: "more",
      session: next.body.id,
    });
    expect(after.body).toMatchObject({ field: "session", error: expect.stringMatching(/worktree was discarded/) });
  }, 120_000);

  test("a repository whose config names programs: none runs, not even when the job's end commits for it", async () => {
    const repo = repository("hostile");
    const marker = path.join(server.root, "RAN");
    const evil = path.join(server.root, "evil.sh");
    writeFileSync(evil, `#!/bin/sh\necho ran >> '${marker}'\ncat\n`);
    chmodSync(evil, 0o755);
    git(repo, "config", "core.fsmonitor", evil);
    git(repo, "config", "filter.x.clean", evil);
    git(repo, "config", "filter.x.smudge", evil);
    writeFileSync(path.join(repo, ".gitattributes"), "* filter=x\n");
    writeFileSync(path.join(repo, ".git/hooks/post-checkout"), `#!/bin/sh\n${evil}\n`);
    chmodSync(path.join(repo, ".git/hooks/post-checkout"), 0o755);
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "sh", prompt: "echo x > x.txt", workdir: repo, worktree: true });
    expect(launched.status, JSON.stringify(launched.body)).toBe(201);
    await server.services.waits.waitFor([launched.body.id], 60_000);
    expect(await call("sh_done", { job_id: launched.body.id })).toMatch(/1 commit, 1 file changed/);
    expect(await call("corral_merge", { job_id: launched.body.id })).toMatch(/^merged /);
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  test("an agent that runs every job in a worktree, unless the launch says worktree: false; a base named HEAD merges into its branch", async () => {
    const repo = repository("default");
    expect(
      (await api(server, "POST", "/api/agents", { name: "sh_wt", kind: "command", command: "/bin/sh", args: ["-c", "{prompt}"], worktree: true }))
        .status,
    ).toBe(201);
    const inWorktree = await api<Job>(server, "POST", "/api/jobs", { agent: "sh_wt", prompt: "echo d > d.txt", workdir: repo, base: "HEAD" });
    expect(inWorktree.status, JSON.stringify(inWorktree.body)).toBe(201);
    expect(inWorktree.body.worktree).toMatchObject({ base: "main", branch: `corral/${inWorktree.body.id}` });
    const plain = await api<Job>(server, "POST", "/api/jobs", { agent: "sh_wt", prompt: "true", workdir: repo, worktree: false });
    expect(plain.body).toMatchObject({ worktree: null, workdir: repo });
    await server.services.waits.waitFor([inWorktree.body.id, plain.body.id], 60_000);
    expect((await api(server, "POST", `/api/jobs/${inWorktree.body.id}/merge`)).status).toBe(200);
    expect(git(repo, "ls-tree", "--name-only", "main")).toBe("app.txt\nd.txt");
    // A follow-up goes on where its conversation ran; it cannot move into or out of a worktree.
    const talk = await api<Job>(server, "POST", "/api/jobs", { agent: "claude", prompt: "hello", workdir: repo });
    await server.services.waits.waitFor([talk.body.id], 60_000);
    const moved = await api<{ field: string; error: string }>(server, "POST", "/api/jobs", {
      agent: "claude",
      prompt: "x",
      session: talk.body.id,
      worktree: true,
    });
    expect(moved.body).toMatchObject({ field: "worktree", error: expect.stringMatching(/ran in its workdir/) });
    expect((await api(server, "PATCH", "/api/agents/sh_wt", { worktree: false })).status).toBe(200);
  }, 120_000);

  test("left unreviewed, a worktree is archived: its folder goes, its branch keeps every change, and it still diffs, merges and discards", async () => {
    const repo = repository("archive");
    const ids = await Promise.all(
      ["echo kept > kept.txt", "echo gone > gone.txt"].map(
        async (prompt) => (await api<Job>(server, "POST", "/api/jobs", { agent: "sh", prompt, workdir: repo, worktree: true })).body.id,
      ),
    );
    const [kept, gone] = ids as [string, string];
    await server.services.waits.waitFor(ids, 60_000);
    const warnings: string[] = [];
    // Not yet past the policy's days: nothing happens.
    expect(await server.services.worktrees.archiveAbandoned(14 * 86_400_000, Date.now(), (m) => warnings.push(m))).toEqual([]);
    const archived = await server.services.worktrees.archiveAbandoned(1000, Date.now() + 2000, (m) => warnings.push(m));
    expect(archived).toEqual(expect.arrayContaining(ids));
    expect(warnings).toEqual([]);
    const job = await jobOf(kept);
    expect(job.worktree?.state).toBe("archived");
    expect(existsSync(job.workdir)).toBe(false);
    expect(git(repo, "show", "--name-only", "--format=%s", `corral/${kept}`)).toBe(`corral: what job ${kept} (sh) left uncommitted\n\nkept.txt`);
    const changes = await api<JobChanges>(server, "GET", `/api/jobs/${kept}/diff`);
    expect(changes.body.change.files).toBe(1);
    expect(changes.body.diff).toContain("+kept");
    expect(await call("sh_done", { job_id: kept })).toMatch(/1 commit, 1 file changed/);
    const talk = await api<Job>(server, "POST", "/api/jobs", { agent: "claude", prompt: "write t.txt", workdir: repo, worktree: true });
    await server.services.waits.waitFor([talk.body.id], 60_000);
    await server.services.worktrees.archiveAbandoned(1000, Date.now() + 2000, (m) => warnings.push(m));
    const followUp = await api<{ error: string }>(server, "POST", "/api/jobs", { agent: "claude", prompt: "more", session: talk.body.id });
    expect(followUp.body.error).toMatch(new RegExp(`worktree was archived.*base corral/${talk.body.id}`));
    expect((await api(server, "POST", `/api/jobs/${kept}/merge`)).status).toBe(200);
    expect(git(repo, "ls-tree", "--name-only", "main")).toBe("app.txt\nkept.txt");
    const dropped = await api<{ commits: string[] }>(server, "POST", `/api/jobs/${gone}/discard`);
    expect(dropped.body.commits).toHaveLength(1);
    expect(git(repo, "branch", "--list", "--format=%(refname:short)", "corral/*")).toBe(`corral/${talk.body.id}`);
  }, 120_000);

  test("a worktree folder deleted by hand still reads, and merges, from its branch", async () => {
    const repo = repository("deleted");
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "sh", prompt: "echo x > x.txt", workdir: repo, worktree: true });
    await server.services.waits.waitFor([launched.body.id], 60_000);
    rmSync(launched.body.workdir, { recursive: true, force: true });
    expect(await call("sh_done", { job_id: launched.body.id })).toMatch(/1 commit, 1 file changed/);
    expect(await call("corral_diff", { job_id: launched.body.id })).toContain("+x");
    expect(await call("corral_merge", { job_id: launched.body.id })).toMatch(/^merged /);
    expect(git(repo, "ls-tree", "--name-only", "main")).toBe("app.txt\nx.txt");
  }, 120_000);

  test("a follow-up is refused while its worktree is being merged, and a merge while a follow-up is being launched", async () => {
    const repo = repository("held");
    const first = await api<Job>(server, "POST", "/api/jobs", { agent: "claude", prompt: "write a.txt", workdir: repo, worktree: true });
    await server.services.waits.waitFor([first.body.id], 60_000);
    const worktreePath = first.body.workdir;
    const merging = holdWorktree(worktreePath, "being merged (job test)", "job_id");
    const refused = await api<{ field: string; error: string }>(server, "POST", "/api/jobs", {
      agent: "claude",
      prompt: "more",
      session: first.body.id,
    });
    expect({ status: refused.status, ...refused.body }).toMatchObject({
      status: 409,
      field: "session",
      error: expect.stringMatching(/is being merged/),
    });
    merging();
    const launching = holdWorktree(worktreePath, "taken by a follow-up being launched", "session");
    const mergeRefused = await api<{ error: string }>(server, "POST", `/api/jobs/${first.body.id}/merge`);
    expect({ status: mergeRefused.status, error: mergeRefused.body.error }).toMatchObject({ status: 409, error: expect.stringMatching(/follow-up/) });
    launching();
    const next = await api<Job>(server, "POST", "/api/jobs", { agent: "claude", prompt: "more", session: first.body.id });
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    await server.services.waits.waitFor([next.body.id], 60_000);
    // Released once stored: the merge goes through.
    expect((await api(server, "POST", `/api/jobs/${first.body.id}/merge`)).status).toBe(200);
  }, 120_000);

  test("a merge given the head of the diff it read refuses a branch that moved since", async () => {
    const repo = repository("reviewed");
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "sh", prompt: "echo reviewed > r.txt", workdir: repo, worktree: true });
    await server.services.waits.waitFor([launched.body.id], 60_000);
    const read = await api<JobChanges>(server, "GET", `/api/jobs/${launched.body.id}/diff`);
    const head = read.body.change.head;
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(git(repo, "rev-parse", `corral/${launched.body.id}`)).toBe(head);
    // Something still writing there after the review: its file would merge unseen.
    writeFileSync(path.join(launched.body.workdir, "unseen.txt"), "x\n");
    const stale = await api<{ field: string; error: string }>(server, "POST", `/api/jobs/${launched.body.id}/merge?head=${head}`);
    expect({ status: stale.status, field: stale.body.field }).toEqual({ status: 409, field: "head" });
    expect(stale.body.error).toMatch(/moved since its diff was read.*read the diff again/);
    expect(git(repo, "ls-tree", "--name-only", "main")).toBe("app.txt");
    expect((await api(server, "POST", `/api/jobs/${launched.body.id}/merge?head=nope`)).status).toBe(400);
    const again = await api<JobChanges>(server, "GET", `/api/jobs/${launched.body.id}/diff`);
    expect(again.body.diff).toContain("unseen.txt");
    expect((await api(server, "POST", `/api/jobs/${launched.body.id}/merge?head=${again.body.change.head}`)).status).toBe(200);
    expect(git(repo, "ls-tree", "--name-only", "main")).toBe("app.txt\nr.txt\nunseen.txt");
  }, 120_000);

  test("a diff past 2 MiB is cut at a line's end, saying so; the change is whole in the branch", async () => {
    const repo = repository("big");
    const launched = await api<Job>(server, "POST", "/api/jobs", {
      agent: "sh",
      prompt: "yes 0123456789012345678901234567890123456789 | head -n 80000 > big.txt",
      workdir: repo,
      worktree: true,
    });
    await server.services.waits.waitFor([launched.body.id], 60_000);
    const diff = await api<JobChanges>(server, "GET", `/api/jobs/${launched.body.id}/diff`);
    expect(diff.body.truncated).toBe(true);
    expect(diff.body.diff.length).toBeLessThan(2 * 1024 * 1024 + 200);
    expect(diff.body.diff).toMatch(
      new RegExp(`\\+0123456789012345678901234567890123456789\n\\[… cut at 2097152 bytes: the rest is in branch corral/${launched.body.id}\\]\n$`),
    );
  }, 120_000);

  test.skipIf(!hasBwrap())(
    "in the sandbox a worker reads git, writes its worktree and commits, never the repository: Corral takes its commits and commits what it leaves",
    async () => {
      const repo = repository("sandboxed");
      const created = await api(server, "POST", "/api/agents", {
        name: "sh_box",
        kind: "command",
        command: "/bin/sh",
        args: ["-c", "{prompt}"],
        sandbox: "bwrap",
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const script = [
        "echo boxed > boxed.txt",
        "git status --porcelain > status.out 2>&1",
        "git log --format=%s > log.out 2>&1",
        "(git add boxed.txt && git -c user.name=w -c user.email=w@x commit -qm mine) > commit.out 2>&1 || echo refused >> commit.out",
        "echo second > second.txt && git add second.txt && git -c user.name=w -c user.email=w@x commit -qm 'mine too'",
        "git log --format=%s > log2.out 2>&1",
        "git checkout -q -b elsewhere > branch.out 2>&1 || echo refused >> branch.out",
        "echo 'exit 1' > $(git rev-parse --git-common-dir)/hooks/pre-commit 2>/dev/null || echo refused > hook.out",
        "echo planted > ../../../planted.txt 2>/dev/null || true",
        "echo left > left.txt",
      ].join("; ");
      const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "sh_box", prompt: script, workdir: repo, worktree: true });
      expect(launched.status, JSON.stringify(launched.body)).toBe(201);
      await server.services.waits.waitFor([launched.body.id], 60_000);
      const wt = launched.body.workdir;
      expect(readFileSync(path.join(wt, "status.out"), "utf8")).toContain("?? boxed.txt");
      expect(readFileSync(path.join(wt, "log.out"), "utf8")).toBe("start\n");
      expect(readFileSync(path.join(wt, "commit.out"), "utf8")).toBe("");
      expect(readFileSync(path.join(wt, "log2.out"), "utf8")).toBe("mine too\nmine\nstart\n");
      // A branch, a hook: the repository's .git stays read-only.
      expect(readFileSync(path.join(wt, "branch.out"), "utf8")).toMatch(/Read-only file system[\s\S]*refused/);
      expect(readFileSync(path.join(wt, "hook.out"), "utf8")).toBe("refused\n");
      expect(git(repo, "branch", "--list", "elsewhere")).toBe("");
      expect(existsSync(path.join(server.root, "planted.txt"))).toBe(false);
      // The worker's commits are its branch's, by their author; what it left is Corral's on top.
      const id = launched.body.id;
      expect(git(repo, "log", "--format=%an %s", `corral/${id}`).split("\n")).toEqual([
        `Corral corral: what job ${id} (sh_box) left uncommitted`,
        "w mine too",
        "w mine",
        "u start",
      ]);
      const leftovers = git(repo, "show", "--name-only", "--format=", `corral/${id}`).split("\n");
      expect(leftovers).toContain("left.txt");
      expect(leftovers).not.toContain("second.txt");
      expect(git(repo, "fsck", "--strict")).toBe("");
      // The worktree reads as its branch again, and its private git folder is gone.
      expect(git(wt, "status", "--porcelain")).toBe("");
      expect(git(wt, "rev-parse", "--abbrev-ref", "HEAD")).toBe(`corral/${id}`);
      expect(existsSync(path.join(server.dataDir, "worktree-git", id))).toBe(false);
      const done = await call("sh_box_done", { job_id: id });
      expect(done).toMatch(/3 commits, 9 files changed/);
    },
    120_000,
  );
});
