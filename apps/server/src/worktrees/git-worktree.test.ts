import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import {
  archiveWorktree,
  changeOf,
  commitLeftovers,
  createWorktree,
  diffOf,
  discardWorktree,
  mergeWorktree,
  removeWorktree,
  worktreePathOf,
} from "./git-worktree.js";

const root = mkdtempSync(path.join(tmpdir(), "corral-wt-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sh = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" },
  }).trim();

function repository(name: string): string {
  const repo = path.join(root, name);
  mkdirSync(repo);
  sh(repo, "init", "-q", "-b", "main");
  writeFileSync(path.join(repo, "app.txt"), "one\ntwo\nthree\n");
  sh(repo, "add", ".");
  sh(repo, "commit", "-q", "-m", "start");
  return repo;
}

describe("a job's worktree", () => {
  test("three jobs on one repository: one merges, the second conflicts and nothing is half-merged, the third is discarded", async () => {
    const repo = repository("three");
    const [a, b, c] = await Promise.all(["job1", "job2", "job3"].map((id) => createWorktree(path.join(repo), id, undefined)));
    if (!a || !b || !c) throw new Error("no worktree");
    expect(a).toMatchObject({ repo, branch: "corral/job1", base: "main", state: "active", path: worktreePathOf(repo, "job1") });
    expect(a.path).toBe(path.join(root, ".corral-worktrees", "three", "job1"));
    // Each writes the same file differently; the first commits itself, the others leave it to Corral.
    writeFileSync(path.join(a.path, "app.txt"), "one\nTWO by a\nthree\n");
    sh(a.path, "commit", "-q", "-am", "a's change");
    writeFileSync(path.join(b.path, "app.txt"), "one\nTWO by b\nthree\n");
    writeFileSync(path.join(b.path, "new.txt"), "b's file\n");
    writeFileSync(path.join(c.path, "app.txt"), "one\ntwo\nthree\nfour by c\n");

    // The change is told with uncommitted work included, before anything is committed for it.
    const bChange = await changeOf(b);
    expect(bChange).toMatchObject({ commits: [], files: 2 });
    expect(bChange.stat).toMatch(/app\.txt \| 2 \+-/);
    expect(bChange.stat).toMatch(/create mode 100644 new\.txt/);
    expect(sh(b.path, "status", "--porcelain")).toContain("?? new.txt");

    expect(await commitLeftovers(b, "job2", "gemini")).toBe(true);
    expect(await commitLeftovers(b, "job2", "gemini")).toBe(false);
    expect(sh(b.path, "log", "-1", "--format=%an %s")).toBe("Corral corral: what job job2 (gemini) left uncommitted");
    expect((await changeOf(a)).commits).toEqual([expect.stringMatching(/^[0-9a-f]+ a's change$/)]);
    expect((await diffOf(a)).diff).toContain("+TWO by a");
    expect((await diffOf(b, "new.txt")).diff).toMatch(/^diff --git a\/new\.txt b\/new\.txt/);

    // main is checked out in the repository: a fast-forward there.
    expect(await mergeWorktree(a, "job1", "claude")).toMatchObject({ into: "main", fastForward: true });
    expect(readFileSync(path.join(repo, "app.txt"), "utf8")).toBe("one\nTWO by a\nthree\n");
    const head = sh(repo, "rev-parse", "HEAD");
    await expect(mergeWorktree(b, "job2", "gemini")).rejects.toMatchObject({
      status: 409,
      message: expect.stringMatching(/does not merge cleanly into main: app\.txt; nothing was merged/),
    });
    expect(sh(repo, "rev-parse", "HEAD")).toBe(head);
    expect(sh(repo, "status", "--porcelain")).toBe("");
    expect(existsSync(path.join(repo, ".git", "MERGE_HEAD"))).toBe(false);

    await removeWorktree(c);
    expect(existsSync(c.path)).toBe(false);
    expect(sh(repo, "branch", "--list", "corral/job3")).toBe("");
    expect(sh(repo, "log", "--format=%s", "main")).toBe("a's change\nstart");
  });

  test("many launches at once on one repository each get their worktree (git alone fails reading one another's half-written entry)", async () => {
    const repo = repository("crowd");
    for (let round = 0; round < 4; round++) {
      const ids = Array.from({ length: 12 }, (_, i) => `r${round}j${i}`);
      const made = await Promise.all(ids.map((id) => createWorktree(repo, id, undefined)));
      expect(made.map((wt) => wt.branch)).toEqual(ids.map((id) => `corral/${id}`));
      await Promise.all(made.map((wt) => removeWorktree(wt)));
    }
    expect(sh(repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
  });

  test("a base that is not checked out merges by its ref alone, with a merge commit when it moved", async () => {
    const repo = repository("elsewhere");
    sh(repo, "branch", "dev");
    const wt = await createWorktree(repo, "job4", "dev");
    expect(wt.base).toBe("dev");
    writeFileSync(path.join(wt.path, "other.txt"), "x\n");
    // dev moves on meanwhile, in a file the job did not touch.
    sh(repo, "checkout", "-q", "dev");
    writeFileSync(path.join(repo, "app.txt"), "one\ntwo\nthree\nmore\n");
    sh(repo, "commit", "-q", "-am", "dev moves");
    sh(repo, "checkout", "-q", "main");
    const merged = await mergeWorktree(wt, "job4", "codex");
    expect(merged).toMatchObject({ into: "dev", fastForward: false });
    expect(sh(repo, "log", "-1", "--format=%an %P", "dev").split(" ")).toHaveLength(3);
    expect(sh(repo, "show", "dev:other.txt")).toBe("x");
    expect(sh(repo, "status", "--porcelain")).toBe("");
  });

  test("a workdir outside a repository, a hostile base and a path out of the repository are refused, naming the field", async () => {
    const plain = path.join(root, "plain");
    mkdirSync(plain);
    await expect(createWorktree(plain, "job5", undefined)).rejects.toMatchObject({
      field: "workdir",
      message: expect.stringMatching(/not in a git repository/),
    });
    const repo = repository("refs");
    for (const base of ["--upload-pack=x", "main..dev", "a b", "main@{1}", "HEAD~1", ""]) {
      await expect(createWorktree(repo, "job6", base), base).rejects.toMatchObject({ field: "base" });
    }
    await expect(createWorktree(repo, "job6", "nope")).rejects.toMatchObject({
      field: "base",
      message: expect.stringMatching(/is not a branch, tag or commit/),
    });
    const wt = await createWorktree(repo, "job7", undefined);
    for (const p of ["../x", "/etc/passwd", "-p", "a\0b"]) await expect(diffOf(wt, p), p).rejects.toMatchObject({ field: "path" });
  });

  test("a linked worktree is no repository to launch in, nor a place to merge: its .git file is its worker's", async () => {
    const repo = repository("linked");
    const wt = await createWorktree(repo, "job9", undefined);
    await expect(createWorktree(wt.path, "job10", undefined)).rejects.toMatchObject({
      field: "workdir",
      message: expect.stringMatching(/is a linked worktree/),
    });
    // A job based on another job's branch would merge into that job's worktree: refused.
    const onTop = await createWorktree(repo, "job11", "corral/job9");
    writeFileSync(path.join(onTop.path, "x.txt"), "x\n");
    await expect(mergeWorktree(onTop, "job11", "sh")).rejects.toMatchObject({
      status: 409,
      message: expect.stringMatching(/is checked out in .*job9, another worktree/),
    });
    expect(sh(wt.path, "log", "--format=%s", "-1")).toBe("start");
  });

  test("a filter its config includes only on corral's branches (includeIf onbranch) never runs at checkout", async () => {
    const repo = repository("onbranch");
    const marker = path.join(root, "ONBRANCH");
    const evil = path.join(root, "onbranch.sh");
    writeFileSync(evil, `#!/bin/sh\necho ran >> '${marker}'\ncat\n`);
    execFileSync("chmod", ["+x", evil]);
    const inc = path.join(root, "onbranch.inc");
    writeFileSync(inc, `[filter "e"]\n\tsmudge = ${evil}\n\tclean = ${evil}\n`);
    sh(repo, "config", "includeIf.onbranch:corral/**.path", inc);
    writeFileSync(path.join(repo, ".gitattributes"), "* filter=e\n");
    sh(repo, "add", ".gitattributes");
    sh(repo, "commit", "-q", "-m", "attributes");
    const wt = await createWorktree(repo, "job12", undefined);
    writeFileSync(path.join(wt.path, "y.txt"), "y\n");
    await commitLeftovers(wt, "job12", "sh");
    await diffOf(wt);
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(path.join(wt.path, "app.txt"), "utf8")).toBe("one\ntwo\nthree\n");
  });

  test("what is committed for the worker is its files as they are, not what it staged and hid", async () => {
    const repo = repository("hidden");
    const wt = await createWorktree(repo, "job13", undefined);
    writeFileSync(path.join(wt.path, "app.txt"), "BACKDOOR\n");
    sh(wt.path, "add", "app.txt");
    sh(wt.path, "update-index", "--assume-unchanged", "app.txt");
    writeFileSync(path.join(wt.path, "app.txt"), "one\ntwo\nthree\ninnocent\n");
    expect((await diffOf(wt)).diff).toContain("+innocent");
    await commitLeftovers(wt, "job13", "sh");
    expect(sh(repo, "show", "corral/job13:app.txt")).toBe("one\ntwo\nthree\ninnocent");
  });

  test("a worker that rewrites its worktree's .git file cannot point Corral's git at another repository", async () => {
    const repo = repository("pointer");
    const other = repository("victim");
    const wt = await createWorktree(repo, "job8", undefined);
    writeFileSync(path.join(wt.path, ".git"), `gitdir: ${path.join(other, ".git")}\n`);
    writeFileSync(path.join(wt.path, "mine.txt"), "x\n");
    await commitLeftovers(wt, "job8", "claude");
    expect(sh(other, "log", "--format=%s")).toBe("start");
    expect(sh(repo, "log", "--format=%s", "corral/job8")).toMatch(/^corral: what job job8/);
  });

  test("a record Corral did not make (written into the registry by other hands) moves nothing: no folder removed, no git run", async () => {
    const repo = repository("forged");
    const victim = path.join(root, "forged-victim");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "keep.txt"), "keep");
    const made = await createWorktree(repo, "job9", undefined);
    for (const forged of [
      { ...made, path: victim },
      { ...made, path: `${repo}/sub/..` },
      { ...made, gitDir: path.join(victim, ".git") },
      { ...made, repo: `${repo}/`, path: worktreePathOf(`${repo}/`, "job9") },
      { ...made, branch: "main" },
    ]) {
      for (const act of [
        () => removeWorktree(forged),
        () => discardWorktree(forged),
        () => archiveWorktree(forged, "job9", "claude"),
        () => commitLeftovers(forged, "job9", "claude"),
        () => mergeWorktree(forged, "job9", "claude"),
        () => diffOf(forged),
      ]) {
        await expect(act(), JSON.stringify(forged)).rejects.toThrow(/is not one Corral made; nothing was done to it/);
      }
    }
    expect(readFileSync(path.join(victim, "keep.txt"), "utf8")).toBe("keep");
    expect(existsSync(path.join(repo, ".git"))).toBe(true);
    expect(sh(repo, "branch", "--list", "main")).toContain("main");
    await removeWorktree(made);
  });
});
