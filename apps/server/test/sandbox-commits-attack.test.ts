import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Job, JobWorktree } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createWorktree } from "../src/worktrees/git-worktree.js";
import { prepareSandboxGit, sandboxGitDirOf, takeSandboxCommits } from "../src/worktrees/sandbox-commits.js";
import { withWorktrees } from "../src/review/worktree-hooks.js";
import { api, startServer, type TestServer } from "./helpers.js";
import { hasBwrap } from "./required-tool.js";

// Attacks on a sandboxed worker's private git folder (worktrees/sandbox-commits.ts): what it leaves
// there is read and removed by Corral, outside the sandbox, when the attempt ends.
const root = mkdtempSync(path.join(tmpdir(), "corral-sandbox-attack-"));
const dataDir = path.join(root, "data");
afterAll(() => {
  // A tree past PATH_MAX is removed by GNU rm (it walks by fd), never by fs.rmSync.
  execFileSync("rm", ["-rf", "--", root]);
});

const ident = { GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" };
const sh = (cwd: string, args: string[], env: Record<string, string> = {}) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, ...ident, ...env } }).trim();

async function worktree(name: string, under = root): Promise<{ repo: string; wt: JobWorktree }> {
  const repo = path.join(under, name);
  mkdirSync(repo, { recursive: true });
  sh(repo, ["init", "-q", "-b", "main"]);
  writeFileSync(path.join(repo, "app.txt"), "one\n");
  sh(repo, ["add", "."]);
  sh(repo, ["commit", "-q", "-m", "start"]);
  return { repo, wt: await createWorktree(repo, name, undefined) };
}

/** A folder deeper than PATH_MAX, made as a worker makes it: one level at a time, by relative paths. */
function deepTree(at: string, levels = 1100): void {
  execFileSync("python3", [
    "-c",
    `import os\nos.makedirs(${JSON.stringify(at)}, exist_ok=True)\nos.chdir(${JSON.stringify(at)})\nfor _ in range(${levels}):\n  os.mkdir("aaaa"); os.chdir("aaaa")\nopen("f", "w").write("x")`,
  ]);
}

/** Many empty files, as a worker makes them in a minute. */
function manyFiles(at: string, count: number): void {
  execFileSync("python3", [
    "-c",
    `import os\nos.makedirs(${JSON.stringify(at)}, exist_ok=True)\nfor i in range(${count}):\n  os.close(os.open(os.path.join(${JSON.stringify(at)}, "f%07d" % i), os.O_CREAT | os.O_WRONLY, 0o644))`,
  ]);
}

describe("a sandboxed worker's git folder, attacked", () => {
  test("a folder in it deeper than PATH_MAX neither rejects the job's end nor breaks the next attempt", async () => {
    const { wt } = await worktree("deep");
    await prepareSandboxGit(wt, "deep", dataDir);
    const own = sandboxGitDirOf(dataDir, "deep");
    deepTree(path.join(own, "junk"));
    // The end of the attempt: answers (null, or why), never throws, and the folder goes.
    await expect(takeSandboxCommits(wt, "deep", dataDir)).resolves.not.toThrow();
    expect(existsSync(own)).toBe(false);
    // The retry's folder is made again whatever the last one left.
    deepTree(path.join(own, "junk"));
    await expect(prepareSandboxGit(wt, "deep", dataDir)).resolves.toBeDefined();
  }, 60_000);

  test("the worktree hook's end never rejects, and still commits what the worker left", async () => {
    const { repo, wt } = await worktree("hooked");
    await prepareSandboxGit(wt, "hooked", dataDir);
    deepTree(path.join(sandboxGitDirOf(dataDir, "hooked"), "objects", "junk"));
    writeFileSync(path.join(wt.path, "left.txt"), "left\n");
    const warnings: string[] = [];
    const hooks = withWorktrees(
      { starting: async () => {}, ended: async () => {} } as never,
      dataDir,
      (m) => warnings.push(m),
      async () => true,
    );
    const row = { id: "hooked", agent: "sh_box", worktree: wt } as never;
    await expect(hooks.ended(row, true)).resolves.toBeUndefined();
    expect(sh(repo, ["show", "--name-only", "--format=%an", "corral/hooked"]).split("\n")).toContain("left.txt");
  }, 60_000);

  test("removing a folder of many files does not stop the server's event loop", async () => {
    const { wt } = await worktree("many");
    await prepareSandboxGit(wt, "many", dataDir);
    const own = sandboxGitDirOf(dataDir, "many");
    manyFiles(path.join(own, "junk"), 70_000);
    manyFiles(path.join(own, "objects", "pack"), 40_000);
    let last = Date.now();
    let worst = 0;
    const tick = setInterval(() => {
      const now = Date.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 10);
    try {
      expect(await takeSandboxCommits(wt, "many", dataDir)).toBeNull();
      // The timer's next turn measures the gap that ends here.
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      clearInterval(tick);
    }
    expect(existsSync(own)).toBe(false);
    expect(worst).toBeLessThan(750);
  }, 120_000);
});

describe("a repository's own config", () => {
  test("a pack.packSizeLimit in it does not keep the worker's commits from being taken", async () => {
    const { repo, wt } = await worktree("packlimit");
    sh(repo, ["config", "pack.packSizeLimit", "1m"]);
    const git = await prepareSandboxGit(wt, "packlimit", dataDir);
    const own = sandboxGitDirOf(dataDir, "packlimit");
    const worker = (...args: string[]) =>
      sh(wt.path, args, {
        GIT_DIR: own,
        GIT_COMMON_DIR: wt.gitDir,
        GIT_WORK_TREE: wt.path,
        ...git.env,
        GIT_OBJECT_DIRECTORY: path.join(own, "objects"),
      });
    for (const name of ["a.bin", "b.bin"]) writeFileSync(path.join(wt.path, name), randomBytes(1_500_000));
    worker("add", ".");
    worker("commit", "-qm", "two big files");
    const made = worker("rev-parse", "HEAD");
    expect(await takeSandboxCommits(wt, "packlimit", dataDir)).toBeNull();
    expect(sh(repo, ["rev-parse", "corral/packlimit"])).toBe(made);
  }, 60_000);
});

describe.skipIf(!hasBwrap())("a sandboxed worker, for real", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    const created = await api(server, "POST", "/api/agents", {
      name: "sh_box",
      kind: "command",
      command: "/bin/sh",
      args: ["-c", "{prompt}"],
      sandbox: "bwrap",
      maxConcurrent: 4,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });
  afterAll(async () => {
    execFileSync("rm", ["-rf", "--", path.join(server.dataDir, "worktree-git")]);
    await server.close();
  });

  const run = async (repo: string, script: string): Promise<Job> => {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "sh_box", prompt: script, workdir: repo, worktree: true });
    expect(launched.status, JSON.stringify(launched.body)).toBe(201);
    await server.services.waits.waitFor([launched.body.id], 90_000);
    return (await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`)).body;
  };

  test("a worker that leaves a too-deep folder in its git folder: the job still ends as it ran, its files committed", async () => {
    const { repo } = await worktree("deepjob", server.root);
    const script = [
      "echo mine > mine.txt",
      // Made one level at a time by relative paths, as any program can.
      `python3 -c 'import os,subprocess\nos.chdir(subprocess.check_output(["git","rev-parse","--absolute-git-dir"]).strip())\nfor _ in range(1100): os.mkdir("aaaa"); os.chdir("aaaa")'`,
    ].join("; ");
    const job = await run(repo, script);
    expect(job.status, job.error ?? "").toBe("succeeded");
    expect(sh(repo, ["show", "--name-only", "--format=", `corral/${job.id}`])).toContain("mine.txt");
    expect(existsSync(sandboxGitDirOf(server.dataDir, job.id))).toBe(false);
  }, 120_000);

  test("a process the worker leaves behind, in its own session, dies with the sandbox (holds)", async () => {
    const { repo } = await worktree("survivor", server.root);
    const script = [
      "echo mine > mine.txt",
      'd="$(git rev-parse --absolute-git-dir)"',
      // After the end: plant alternates naming a folder only the server can read, and note it was alive.
      `setsid nohup sh -c 'sleep 1; mkdir -p "$0/objects/info"; echo /etc > "$0/objects/info/alternates"; touch mine.txt.late' "$d" >/dev/null 2>&1 </dev/null &`,
    ].join("; ");
    const job = await run(repo, script);
    expect(job.status, job.error ?? "").toBe("succeeded");
    await new Promise((r) => setTimeout(r, 2500));
    expect(existsSync(path.join(job.workdir, "mine.txt.late"))).toBe(false);
  }, 120_000);

  test.skipIf(process.getuid?.() !== 0)(
    "a server run as root: the worker cannot remount the repository's .git writable",
    async () => {
      const { repo } = await worktree("remount", server.root);
      const gitDir = path.join(repo, ".git");
      const script = `mount -o remount,bind,rw ${server.root} 2>/dev/null; echo 'echo pwned' > ${gitDir}/hooks/post-checkout 2>/dev/null; echo done > done.txt`;
      const job = await run(repo, script);
      expect(job.status, job.error ?? "").toBe("succeeded");
      expect(existsSync(path.join(gitDir, "hooks", "post-checkout"))).toBe(false);
      expect(readFileSync(path.join(job.workdir, "done.txt"), "utf8")).toBe("done\n");
    },
    120_000,
  );
});
