import { execFileSync, spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Job, JobChanges } from "@corral/shared";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Registry } from "../src/db/registry.js";
import { inUnit } from "../src/db/unit.js";
import { api, startServer, type TestServer, until } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { usePostgres } from "./postgres.js";
import { hasBwrap } from "./required-tool.js";

// Worktree jobs against the parties that control their inputs: a worker (its worktree's files, its
// `.git` file, and, unsandboxed or as a plain job in the repository, the repository's git dir), a
// hand that deletes folders and branches, a config that names a branch `corral`. Real git, a real server.
const postgres = usePostgres();
let server: TestServer;
let client: Client;
beforeAll(async () => {
  server = await startServer();
  client = await connectMcp(server, "/mcp?toolsets=worktrees,hub");
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

function repository(name: string, parent = server.root): string {
  const repo = path.join(parent, name);
  mkdirSync(repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(path.join(repo, "app.txt"), "one\ntwo\nthree\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "start");
  return repo;
}

const call = async (name: string, args: Record<string, unknown>) => textOf(await client.callTool({ name, arguments: args }));
const jobOf = async (id: string) => (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;
const branches = (repo: string) => git(repo, "branch", "--list", "--format=%(refname:short)", "corral/*");

/** A worktree job of `agent` that ran `prompt` to its end. */
async function ran(repo: string, prompt: string, agent = "sh"): Promise<Job> {
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent, prompt, workdir: repo, worktree: true });
  expect(launched.status, JSON.stringify(launched.body)).toBe(201);
  await server.services.waits.waitFor([launched.body.id], 60_000);
  return jobOf(launched.body.id);
}

/** The longest the event loop stalled while `work` ran, in ms. */
async function stallDuring<T>(work: () => Promise<T>): Promise<{ result: T; stalledMs: number }> {
  let last = performance.now();
  let worst = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 20);
  try {
    const result = await work();
    return { result, stalledMs: worst };
  } finally {
    clearInterval(tick);
  }
}

describe("worktree jobs against hostile parties", () => {
  test("a worker that turns its .git file into a directory cannot make its worktree impossible to discard", async () => {
    const repo = repository("dotgit-dir");
    const job = await ran(repo, "echo x > x.txt && rm .git && mkdir .git && echo '[core]' > .git/config");
    // Before: `git worktree remove` refused the worktree ("validation failed"), answered as a 500, every time.
    const discarded = await api<{ commits: string[]; job: Job }>(server, "POST", `/api/jobs/${job.id}/discard`);
    expect(discarded.status, JSON.stringify(discarded.body)).toBe(200);
    expect(discarded.body.commits).toHaveLength(1);
    expect(discarded.body.job.worktree?.state).toBe("discarded");
    expect(existsSync(job.workdir)).toBe(false);
    expect(existsSync(path.join(repo, ".git", "worktrees", job.id))).toBe(false);
    expect(branches(repo)).toBe("");
  }, 60_000);

  test("a worktree's admin gitdir turned into a FIFO never stalls the server", async () => {
    const repo = repository("fifo");
    const job = await ran(repo, "echo x > x.txt");
    const gitdirFile = path.join(repo, ".git", "worktrees", job.id, "gitdir");
    // What a worker that can write the repository's .git does (unsandboxed, or a plain job in the repository: below, sandboxed).
    rmSync(gitdirFile);
    execFileSync("mkfifo", [gitdirFile]);
    // Were Corral to open it, it would wait for a writer: this one comes after 3 s (printf fails at once once the folder is gone).
    const writer = spawn("sh", ["-c", `sleep 3; printf '%s\\n' '${job.workdir}/.git' > '${gitdirFile}'`], { stdio: "ignore" });
    try {
      const { result, stalledMs } = await stallDuring(() => api(server, "POST", `/api/jobs/${job.id}/discard`));
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      // Before: readFileSync on the FIFO held the event loop until the writer came (3 s), then git waited 30 s on it: a 500.
      expect(stalledMs).toBeLessThan(1000);
    } finally {
      writer.kill();
    }
    expect(existsSync(job.workdir)).toBe(false);
    expect(branches(repo)).toBe("");
  }, 60_000);

  test.skipIf(!hasBwrap())(
    "a sandboxed plain job in the repository can write a worktree's admin files: the archive sweep still never stalls",
    async () => {
      const repo = repository("boxed-plain");
      const created = await api(server, "POST", "/api/agents", {
        name: "sh_box",
        kind: "command",
        command: "/bin/sh",
        args: ["-c", "{prompt}"],
        sandbox: "bwrap",
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const job = await ran(repo, "echo x > x.txt");
      const plain = await api<Job>(server, "POST", "/api/jobs", {
        agent: "sh_box",
        prompt: `rm .git/worktrees/${job.id}/gitdir && mkfifo .git/worktrees/${job.id}/gitdir && echo planted`,
        workdir: repo,
      });
      await server.services.waits.waitFor([plain.body.id], 60_000);
      expect((await jobOf(plain.body.id)).status).toBe("succeeded");
      expect(lstatSync(path.join(repo, ".git", "worktrees", job.id, "gitdir")).isFIFO()).toBe(true);
      const warnings: string[] = [];
      const { result, stalledMs } = await stallDuring(() =>
        Promise.race([
          server.services.worktrees.archiveAbandoned(1000, Date.now() + 2000, (m) => warnings.push(m)),
          new Promise<string[]>((resolve) => setTimeout(() => resolve(["stalled"]), 20_000)),
        ]),
      );
      expect(stalledMs).toBeLessThan(1000);
      expect(result).toContain(job.id);
      expect(warnings).toEqual([]);
      expect((await jobOf(job.id)).worktree?.state).toBe("archived");
      expect(git(repo, "ls-tree", "--name-only", `corral/${job.id}`)).toBe("app.txt\nx.txt");
    },
    90_000,
  );

  /** A worker's script: a repository inside its worktree whose own config names a clean filter that writes `marker`. */
  const embedded = (marker: string) =>
    [
      "mkdir sub && cd sub && git init -q",
      `printf '#!/bin/sh\\necho escaped >> %s\\ncat\\n' '${marker}' > .git/evil.sh && chmod +x .git/evil.sh`,
      'git config filter.x.clean "$PWD/.git/evil.sh" && echo "* filter=x" > .gitattributes && echo s > s.txt',
      "git add . && git -c user.name=a -c user.email=a@x commit -qm s && echo more >> s.txt",
    ].join(" && ");

  async function reviewEverything(job: Job): Promise<void> {
    expect((await api(server, "GET", `/api/jobs/${job.id}/diff`)).status).toBe(200);
    expect(await call("corral_diff", { job_id: job.id })).not.toMatch(/^error/);
    expect(await call("sh_done", { job_id: job.id })).toMatch(/^listo/);
    expect(await server.services.worktrees.archiveAbandoned(1000, Date.now() + 2000, () => undefined)).toContain(job.id);
    expect((await api(server, "POST", `/api/jobs/${job.id}/merge`)).status).toBe(200);
  }

  test("a repository a worker makes inside its worktree never runs its own config's programs in Corral's git", async () => {
    const repo = repository("embedded");
    const marker = path.join(server.root, "embedded-ran");
    const job = await ran(repo, embedded(marker));
    // The worker's own git ran its filter; Corral's must not. Before: every diff, change, archive and merge ran it
    // (git add --all checks a committed gitlink with `git status` inside it, where only its own config counts).
    rmSync(marker, { force: true });
    await reviewEverything(job);
    expect(existsSync(marker)).toBe(false);
  }, 60_000);

  test.skipIf(!hasBwrap())(
    "a sandboxed worker's repository inside its worktree runs nothing outside the sandbox",
    async () => {
      const repo = repository("embedded-boxed");
      const created = await api(server, "POST", "/api/agents", {
        name: "sh_box2",
        kind: "command",
        command: "/bin/sh",
        args: ["-c", "{prompt}"],
        sandbox: "bwrap",
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const marker = path.join(server.root, "escaped-the-sandbox");
      const job = await ran(repo, embedded(marker), "sh_box2");
      expect(job.status, job.error ?? "").toBe("succeeded");
      // Inside the sandbox the filter ran, and could not write outside its worktree.
      expect(existsSync(marker)).toBe(false);
      await reviewEverything(job);
      expect(existsSync(marker)).toBe(false);
    },
    60_000,
  );

  test("a re-pointed admin gitdir never makes a removal take another folder", async () => {
    const repo = repository("decoy");
    const decoy = path.join(server.root, "decoy-folder");
    mkdirSync(decoy);
    writeFileSync(path.join(decoy, "precious.txt"), "keep me\n");
    const job = await ran(repo, "echo x > x.txt");
    const admin = path.join(repo, ".git", "worktrees", job.id);
    // A decoy git would accept as this worktree: its .git file points back at the admin folder.
    writeFileSync(path.join(decoy, ".git"), `gitdir: ${admin}\n`);
    writeFileSync(path.join(admin, "gitdir"), `${decoy}/.git\n`);
    const discarded = await api(server, "POST", `/api/jobs/${job.id}/discard`);
    expect(discarded.status, JSON.stringify(discarded.body)).toBe(200);
    expect(readFileSync(path.join(decoy, "precious.txt"), "utf8")).toBe("keep me\n");
    expect(existsSync(job.workdir)).toBe(false);
    expect(branches(repo)).toBe("");
  }, 60_000);

  test("a worker that puts a link in place of its worktree folder: the folder behind the link stays, and a merge that went through says so", async () => {
    const repo = repository("linked");
    const job = await ran(repo, 'echo x > x.txt && here=$(pwd) && cd .. && mv "$here" "$here.moved" && ln -s "$here.moved" "$here"');
    expect(lstatSync(job.workdir).isSymbolicLink()).toBe(true);
    const merged = await api<{ error: string }>(server, "POST", `/api/jobs/${job.id}/merge`);
    // Before: the base moved, yet the answer was only a refusal and the job stayed active (merge again, discard: refused forever).
    expect(merged.status).toBe(409);
    expect(merged.body.error).toMatch(
      new RegExp(`^merged corral/${job.id} into main \\([0-9a-f]{12}\\), but its worktree could not be removed: .*replaced by a link`),
    );
    expect((await jobOf(job.id)).worktree?.state).toBe("merged");
    expect(git(repo, "ls-tree", "--name-only", "main")).toBe("app.txt\nx.txt");
    expect(readdirSync(`${job.workdir}.moved`)).toContain("x.txt");
    expect(await call("sh_done", { job_id: job.id })).toContain(`branch corral/${job.id}: merged`);
  }, 60_000);

  test("a worktree folder deleted by hand: no follow-up or waiting job runs there, so none commits the removal of every file", async () => {
    const repo = repository("gone");
    const first = await api<Job>(server, "POST", "/api/jobs", { agent: "claude", prompt: "write a.txt first", workdir: repo, worktree: true });
    await server.services.waits.waitFor([first.body.id], 60_000);
    rmSync(first.body.workdir, { recursive: true, force: true });
    const next = await api<{ field: string; error: string }>(server, "POST", "/api/jobs", {
      agent: "claude",
      prompt: "write b.txt",
      session: first.body.id,
    });
    // Before: 201; the follow-up ran in an empty folder made again, and its end committed app.txt's deletion on the branch.
    expect({ status: next.status, field: next.body.field }).toEqual({ status: 409, field: "session" });
    expect(next.body.error).toMatch(new RegExp(`is gone .*base corral/${first.body.id}`));
    expect(git(repo, "ls-tree", "--name-only", `corral/${first.body.id}`)).toBe("a.txt\napp.txt");

    // A job waiting to start (its agent busy) whose folder goes meanwhile fails, and runs nothing there.
    expect(
      (await api(server, "POST", "/api/agents", { name: "sh_one", kind: "command", command: "/bin/sh", args: ["-c", "{prompt}"], maxConcurrent: 1 }))
        .status,
    ).toBe(201);
    const busy = await api<Job>(server, "POST", "/api/jobs", { agent: "sh_one", prompt: "sleep 2", workdir: repo, worktree: true });
    const waiting = await api<Job>(server, "POST", "/api/jobs", { agent: "sh_one", prompt: "echo ran > ran.txt", workdir: repo, worktree: true });
    expect((await jobOf(waiting.body.id)).status).toBe("queued");
    rmSync(waiting.body.workdir, { recursive: true, force: true });
    await server.services.waits.waitFor([busy.body.id, waiting.body.id], 60_000);
    const failed = await jobOf(waiting.body.id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/the job was not run: its worktree .* is gone/);
    expect(existsSync(waiting.body.workdir)).toBe(false);
    expect(git(repo, "ls-tree", "--name-only", `corral/${waiting.body.id}`)).toBe("app.txt");
  }, 90_000);

  test("git's refusals answer 409 naming the field, never a 500", async () => {
    const repo = repository("refusals");
    const job = await ran(repo, "echo x > x.txt");
    // The branch deleted by hand while the folder is there: the worktree's HEAD names no commit.
    git(repo, "update-ref", "-d", `refs/heads/corral/${job.id}`);
    for (const [method, url] of [
      ["GET", `/api/jobs/${job.id}/diff`],
      ["POST", `/api/jobs/${job.id}/merge`],
    ] as const) {
      const res = await api<{ field: string; error: string }>(server, method, url);
      expect({ status: res.status, field: res.body.field }, `${method} ${url}: ${JSON.stringify(res.body)}`).toEqual({
        status: 409,
        field: "job_id",
      });
      expect(res.body.error).toMatch(/^git failed on job \w+'s worktree: git /);
    }
    expect(await call("corral_diff", { job_id: job.id })).toMatch(/^error: job_id: git failed/);
    expect((await api(server, "POST", `/api/jobs/${job.id}/discard`)).status).toBe(200);

    // A branch named `corral` leaves no room for corral/<id>: the launch is refused, and leaves no folder behind.
    git(repo, "branch", "corral");
    const refused = await api<{ field: string; error: string }>(server, "POST", "/api/jobs", {
      agent: "sh",
      prompt: "true",
      workdir: repo,
      worktree: true,
    });
    expect({ status: refused.status, field: refused.body.field }, JSON.stringify(refused.body)).toEqual({ status: 409, field: "workdir" });
    expect(refused.body.error).toMatch(/git could not make the worktree of .*refs\/heads\/corral/);
    expect(readdirSync(path.join(server.root, ".corral-worktrees", "refusals"))).toEqual([]);
    expect(git(repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
  }, 60_000);

  test("corral_run_many of agents that run every job in a worktree makes no <workdir>/<agent> folder in the repository", async () => {
    const repo = repository("many");
    for (const name of ["wt_a", "wt_b"]) {
      const created = await api(server, "POST", "/api/agents", {
        name,
        kind: "command",
        command: "/bin/sh",
        args: ["-c", "{prompt}"],
        worktree: true,
      });
      expect(created.status).toBe(201);
    }
    const answer = await call("corral_run_many", { agents: ["wt_a", "wt_b"], prompt: "echo hi > hi.txt", workdir: repo });
    expect(answer).toMatch(/^ok: all 2 succeeded/);
    // Before: repo/wt_a and repo/wt_b were made (empty) in the user's repository.
    expect(readdirSync(repo).sort()).toEqual([".git", "app.txt"]);
    expect(branches(repo).split("\n")).toHaveLength(2);
    // A refusal of any agent takes back the worktrees made for the others.
    expect(await call("corral_run_many", { agents: ["wt_a", "wt_b", "nope"], prompt: "true", workdir: repo })).toMatch(/^error: agents\.2: nope/);
    expect(branches(repo).split("\n")).toHaveLength(2);
    expect(readdirSync(path.join(server.root, ".corral-worktrees", "many"))).toHaveLength(2);
  }, 60_000);

  test("a worktree made for a launch in a caller's transaction goes when that transaction rolls back", async () => {
    const repo = repository("rollback");
    const created = await api(server, "POST", "/api/agents", {
      name: "wt_relay",
      kind: "command",
      command: "/bin/sh",
      args: ["-c", "{prompt}"],
      worktree: true,
    });
    expect(created.status).toBe(201);
    // As a conversation's relay does: the job and its message stored together, and the message's write fails.
    const registry = (server.services.launches as unknown as { deps: { registry: Registry } }).deps.registry;
    let launched: Job | undefined;
    await expect(
      inUnit(registry, async (unit) => {
        launched = await server.services.launches.launch("wt_relay", { prompt: "true", workdir: repo }, "mcp", null, unit);
        throw new Error("the message could not be stored");
      }),
    ).rejects.toThrow(/could not be stored/);
    expect(launched?.worktree).toBeTruthy();
    await expect(server.services.jobs.get(launched?.id ?? "")).rejects.toThrow(/not found/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(existsSync(launched?.workdir ?? "")).toBe(false);
    expect(branches(repo)).toBe("");
  }, 60_000);

  test("a conversation's message to a worker that runs every job in a worktree: its job runs in one, and the registry never waits on itself", async () => {
    const repo = repository("hub");
    const created = await api(server, "POST", "/api/agents", {
      name: "wt_hub",
      kind: "command",
      command: "/bin/sh",
      args: ["-c", "{prompt}"],
      workdir: repo,
      worktree: true,
    });
    expect(created.status).toBe(201);
    const text = await call("corral_register", { name: "lead", session: "wt-hub" });
    const handle = /^handle: ([A-Za-z0-9_-]+)$/m.exec(text)?.[1] ?? "";
    // Before: the launch read the agent through the registry inside the message's transaction, which
    // with SQLite waits for that transaction to end: every later call to the registry hung with it.
    const sent = await Promise.race([
      call("corral_send", { handle, to: "wt_hub", text: "echo hub > hub.txt" }),
      new Promise<string>((resolve) => setTimeout(() => resolve("hung"), 15_000)),
    ]);
    const jobId = /job (\w+) is answering/.exec(sent)?.[1] ?? "";
    expect(jobId, sent).not.toBe("");
    expect(await call("corral_receive", { handle, timeout_s: 30 })).toContain(`job ${jobId}`);
    expect((await jobOf(jobId)).worktree?.branch).toBe(`corral/${jobId}`);
    expect(git(repo, "ls-tree", "--name-only", `corral/${jobId}`)).toBe("app.txt\nhub.txt");
  }, 60_000);

  test("a client without the token reads and changes no worktree", async () => {
    const repo = repository("no-token");
    const job = await ran(repo, "echo x > x.txt");
    for (const [method, url] of [
      ["GET", `/api/jobs/${job.id}/diff`],
      ["POST", `/api/jobs/${job.id}/merge`],
      ["POST", `/api/jobs/${job.id}/discard`],
    ] as const) {
      const res = await fetch(`${server.url}${url}`, { method });
      expect(res.status, `${method} ${url}`).toBe(401);
    }
    expect((await jobOf(job.id)).worktree?.state).toBe("active");
  }, 60_000);

  test("hostile diff paths are refused or read literally, and git is never handed an option", async () => {
    const repo = repository("paths");
    const job = await ran(repo, "echo x > x.txt && mkdir -p sub && echo y > sub/y.txt && echo star > '*'");
    const pwned = path.join(server.root, "pwned");
    const refused = ["-x", `--output=${pwned}`, "../x", "/etc/passwd", "a/../../x", "sub/../x.txt", "..", "a\0b"];
    for (const p of refused) {
      const res = await api<{ field: string }>(server, "GET", `/api/jobs/${job.id}/diff?path=${encodeURIComponent(p)}`);
      expect({ status: res.status, field: res.body.field }, JSON.stringify(p)).toEqual({ status: 400, field: "path" });
    }
    const readAs: [string, RegExp | ""][] = [
      [":(glob)*", ""],
      [":(top)x.txt", ""],
      ["*", /^diff --git a\/\* b\/\*\n/],
      ["x.txt\nfoo", ""],
      ["x".repeat(4096), ""],
      ["sub", /^diff --git a\/sub\/y\.txt/],
    ];
    for (const [p, diff] of readAs) {
      const res = await api<JobChanges>(server, "GET", `/api/jobs/${job.id}/diff?path=${encodeURIComponent(p)}`);
      expect(res.status, JSON.stringify(p)).toBe(200);
      if (diff === "") expect(res.body.diff).toBe("");
      else expect(res.body.diff).toMatch(diff);
    }
    expect((await api(server, "GET", `/api/jobs/${job.id}/diff?path=${"x".repeat(4097)}`)).status).toBe(400);
    expect(await call("corral_diff", { job_id: job.id, path: "-x" })).toMatch(/^error: path: /);
    expect(existsSync(pwned)).toBe(false);
  }, 60_000);

  test("a link planted at .corral-worktrees/<repository> is followed only where the workdir check allows, and removal goes through it", async () => {
    const parent = path.join(server.root, "parent");
    mkdirSync(parent);
    const repo = repository("r", parent);
    const elsewhere = path.join(server.root, "elsewhere");
    mkdirSync(elsewhere);
    mkdirSync(path.join(parent, ".corral-worktrees"));
    symlinkSync(elsewhere, path.join(parent, ".corral-worktrees", "r"));
    const job = await ran(repo, "echo x > x.txt");
    expect(readdirSync(elsewhere)).toEqual([job.id]);
    // Before: removal refused it (git records the real path), after the merge had moved main.
    const merged = await api(server, "POST", `/api/jobs/${job.id}/merge`);
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    expect(readdirSync(elsewhere)).toEqual([]);
    // Pointing out of the allowed roots, it is refused before anything is made.
    rmSync(path.join(parent, ".corral-worktrees", "r"));
    symlinkSync("/var/tmp", path.join(parent, ".corral-worktrees", "r"));
    const outside = await api<{ field: string }>(server, "POST", "/api/jobs", { agent: "sh", prompt: "true", workdir: repo, worktree: true });
    expect({ status: outside.status, field: outside.body.field }).toEqual({ status: 400, field: "workdir" });
    expect(branches(repo)).toBe("");
    renameSync(path.join(parent, ".corral-worktrees"), path.join(parent, "old"));
  }, 60_000);
});

describe.skipIf(!postgres.available)("worktree jobs with runners (PostgreSQL)", () => {
  test("a waiting worktree job whose agent is given a runner label stays on this machine, where its worktree is", async () => {
    const other = await startServer({ CORRAL_DATABASE_URL: await postgres.database() });
    try {
      const agent = { name: "sh_one", kind: "command", command: "/bin/sh", args: ["-c", "{prompt}"], maxConcurrent: 1 };
      expect((await api(other, "POST", "/api/agents", agent)).status).toBe(201);
      const repo = path.join(other.root, "labelled");
      mkdirSync(repo);
      git(repo, "init", "-q", "-b", "main");
      writeFileSync(path.join(repo, "app.txt"), "one\n");
      git(repo, "add", ".");
      git(repo, "commit", "-q", "-m", "start");
      const busy = await api<Job>(other, "POST", "/api/jobs", { agent: "sh_one", prompt: "sleep 2", workdir: repo, worktree: true });
      const waiting = await api<Job>(other, "POST", "/api/jobs", { agent: "sh_one", prompt: "echo b > b.txt", workdir: repo, worktree: true });
      expect(waiting.status, JSON.stringify(waiting.body)).toBe(201);
      // Allowed: the agent does not default to worktrees; only its waiting job has one.
      expect((await api(other, "PATCH", "/api/agents/sh_one", { runnerLabel: "gpu" })).status).toBe(200);
      // Its new jobs may default to worktrees too: a runner makes each where it runs the job (runner-worktrees.test.ts).
      expect((await api(other, "PATCH", "/api/agents/sh_one", { worktree: true })).status).toBe(200);
      await other.services.waits.waitFor([busy.body.id], 30_000);
      // Before: handed to the runners (runner null), it waited for one that would run it on another machine, away from its worktree.
      const ended = await until(
        async () => {
          const job = (await api<Job>(other, "GET", `/api/jobs/${waiting.body.id}`)).body;
          return job.status === "queued" || job.status === "running" ? undefined : job;
        },
        20_000,
        "the waiting job ending",
      ).catch(async () => (await api<Job>(other, "GET", `/api/jobs/${waiting.body.id}`)).body);
      expect({ status: ended.status, runner: ended.runner }).toEqual({ status: "succeeded", runner: "local" });
      expect(git(repo, "ls-tree", "--name-only", `corral/${waiting.body.id}`)).toBe("app.txt\nb.txt");
    } finally {
      await other.close();
    }
  }, 90_000);
});
