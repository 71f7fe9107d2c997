import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { JobWorktree } from "@corral/shared";
import { afterAll, describe, expect, test } from "vitest";
import { adminDirOf, commitLeftovers, createWorktree } from "./git-worktree.js";
import { prepareSandboxGit, sandboxGitDirOf, takeSandboxCommits } from "./sandbox-commits.js";

// The commits of a worker in the sandbox, with real git. The sandbox itself (bubblewrap mounting
// the private folder over the admin folder) is tested end to end in test/worktrees.test.ts; here
// the worker's git is run with the variables and folders the sandbox gives it, and the folder is
// then written as a hostile worker would.
const root = mkdtempSync(path.join(tmpdir(), "corral-sandbox-git-"));
const dataDir = path.join(root, "data");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ident = { GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" };
const sh = (cwd: string, args: string[], env: Record<string, string> = {}) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, ...ident, ...env } }).trim();

async function worktree(name: string): Promise<{ repo: string; wt: JobWorktree }> {
  const repo = path.join(root, name);
  mkdirSync(repo);
  sh(repo, ["init", "-q", "-b", "main"]);
  writeFileSync(path.join(repo, "app.txt"), "one\n");
  sh(repo, ["add", "."]);
  sh(repo, ["commit", "-q", "-m", "start"]);
  return { repo, wt: await createWorktree(repo, name, undefined) };
}

/** The worker's git as it runs in the sandbox: its admin folder is the private one, its objects go there. */
async function workerGit(wt: JobWorktree, id: string): Promise<(...args: string[]) => string> {
  const git = await prepareSandboxGit(wt, id, dataDir);
  const own = sandboxGitDirOf(dataDir, id);
  expect(git.binds).toEqual([[own, adminDirOf(wt)]]);
  expect(git.env.GIT_ALTERNATE_OBJECT_DIRECTORIES).toBe(path.join(wt.gitDir, "objects"));
  return (...args) =>
    sh(wt.path, args, {
      GIT_DIR: own,
      GIT_COMMON_DIR: wt.gitDir,
      GIT_WORK_TREE: wt.path,
      GIT_OBJECT_DIRECTORY: path.join(own, "objects"),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: git.env.GIT_ALTERNATE_OBJECT_DIRECTORIES ?? "",
    });
}

const branchOf = (repo: string, id: string) => sh(repo, ["rev-parse", `corral/${id}`]);
const log = (repo: string, id: string) => sh(repo, ["log", "--format=%an %s", `corral/${id}`]).split("\n");

describe("a sandboxed worker's commits", () => {
  test("are taken onto the job's branch, its objects into the repository; the worktree reads as its branch again", async () => {
    const { repo, wt } = await worktree("taken");
    const worker = await workerGit(wt, "taken");
    expect(worker("status", "--porcelain")).toBe("");
    expect(worker("rev-parse", "HEAD")).toBe(branchOf(repo, "taken"));
    writeFileSync(path.join(wt.path, "app.txt"), "one\ntwo\n");
    worker("commit", "-qam", "second line");
    writeFileSync(path.join(wt.path, "new.txt"), "new\n");
    worker("add", "new.txt");
    worker("commit", "-qm", "a new file");
    // Nothing of it is in the repository until the job ends.
    expect(log(repo, "taken")).toEqual(["u start"]);
    const made = worker("rev-parse", "HEAD");
    expect(() => sh(repo, ["cat-file", "-e", made])).toThrow();

    expect(await takeSandboxCommits(wt, "taken", dataDir)).toBeNull();
    expect(branchOf(repo, "taken")).toBe(made);
    expect(log(repo, "taken")).toEqual(["u a new file", "u second line", "u start"]);
    expect(sh(repo, ["fsck", "--strict", "--no-dangling"])).toBe("");
    expect(sh(wt.path, ["status", "--porcelain"])).toBe("");
    expect(existsSync(sandboxGitDirOf(dataDir, "taken"))).toBe(false);
    // A retry, or the next turn, starts from the branch.
    const again = await workerGit(wt, "taken");
    expect(again("rev-parse", "HEAD")).toBe(made);
    expect(await takeSandboxCommits(wt, "taken", dataDir)).toBeNull();
    expect(branchOf(repo, "taken")).toBe(made);
  });

  test("that rewrite the branch's history are not taken: the files are committed, saying why", async () => {
    const { repo, wt } = await worktree("rewritten");
    const start = branchOf(repo, "rewritten");
    const worker = await workerGit(wt, "rewritten");
    writeFileSync(path.join(wt.path, "app.txt"), "rewritten\n");
    worker("commit", "-q", "--amend", "-am", "start, rewritten");
    const why = await takeSandboxCommits(wt, "rewritten", dataDir);
    expect(why).toMatch(
      /^its commits were not taken: its HEAD [0-9a-f]{12} does not descend from corral\/rewritten \([0-9a-f]{12}\); history is never rewritten$/,
    );
    expect(branchOf(repo, "rewritten")).toBe(start);
    await commitLeftovers(wt, "rewritten", "sh", why ?? undefined);
    expect(sh(repo, ["log", "-1", "--format=%an %s%n%b", "corral/rewritten"])).toBe(
      `Corral corral: what job rewritten (sh) left uncommitted\n${why}`,
    );
    expect(sh(repo, ["show", "corral/rewritten:app.txt"])).toBe("rewritten");
  });

  test("whose HEAD names a branch, or is a FIFO or a link, are none: nothing hangs, nothing moves", async () => {
    const { repo, wt } = await worktree("heads");
    const start = branchOf(repo, "heads");
    const own = sandboxGitDirOf(dataDir, "heads");
    for (const plant of [
      () => writeFileSync(path.join(own, "HEAD"), "ref: refs/heads/main\n"),
      () => execFileSync("mkfifo", [path.join(own, "HEAD")]),
      () => symlinkSync(path.join(repo, ".git", "HEAD"), path.join(own, "HEAD")),
      () => writeFileSync(path.join(own, "HEAD"), `${"f".repeat(40)}\n${"0".repeat(100_000)}`),
    ]) {
      await workerGit(wt, "heads");
      rmSync(path.join(own, "HEAD"));
      plant();
      expect(await takeSandboxCommits(wt, "heads", dataDir)).toBeNull();
      expect(branchOf(repo, "heads")).toBe(start);
      expect(existsSync(own)).toBe(false);
    }
  });

  test("are not taken through a link or FIFO in the object folder, nor from the folders alternates name", async () => {
    const { repo, wt } = await worktree("planted");
    const start = branchOf(repo, "planted");
    const own = sandboxGitDirOf(dataDir, "planted");
    // Another repository on the machine, whose objects the worker names but cannot read in the sandbox.
    const secret = path.join(root, "secret");
    mkdirSync(secret);
    sh(secret, ["init", "-q"]);
    writeFileSync(path.join(secret, "key.txt"), "secret\n");
    sh(secret, ["add", "."]);
    sh(secret, ["commit", "-q", "-m", "secret"]);
    const secretTree = sh(secret, ["rev-parse", "HEAD^{tree}"]);

    // A commit of that tree, made with the other repository's objects as alternates, then named in info/alternates.
    let worker = await workerGit(wt, "planted");
    const commit = sh(wt.path, ["commit-tree", secretTree, "-p", start, "-m", "exfiltrate"], {
      GIT_DIR: wt.gitDir,
      GIT_OBJECT_DIRECTORY: path.join(own, "objects"),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: `${path.join(wt.gitDir, "objects")}:${path.join(secret, ".git", "objects")}`,
    });
    writeFileSync(path.join(own, "HEAD"), `${commit}\n`);
    writeFileSync(path.join(own, "objects", "info", "alternates"), `${path.join(secret, ".git", "objects")}\n`);
    expect(await takeSandboxCommits(wt, "planted", dataDir)).toMatch(/^its commits were not taken: git /);
    expect(branchOf(repo, "planted")).toBe(start);
    expect(() => sh(repo, ["cat-file", "-e", secretTree])).toThrow();

    // The object folder, or one of its entries, a link to the other repository's; a FIFO.
    for (const plant of [
      (objects: string) => {
        rmSync(objects, { recursive: true });
        symlinkSync(path.join(secret, ".git", "objects"), objects);
      },
      (objects: string) => {
        // One of the other repository's object folders the worker's own commit did not make (a link git would follow).
        const own = new Set(readdirSync(objects));
        const [sub] = readdirSync(path.join(secret, ".git", "objects")).filter((d) => d.length === 2 && !own.has(d));
        symlinkSync(path.join(secret, ".git", "objects", sub ?? ""), path.join(objects, sub ?? ""));
      },
      (objects: string) => execFileSync("mkfifo", [path.join(objects, "pack", "pack-0.pack")]),
    ]) {
      worker = await workerGit(wt, "planted");
      writeFileSync(path.join(wt.path, "app.txt"), "mine\n");
      worker("commit", "-qam", "mine");
      plant(path.join(own, "objects"));
      expect(await takeSandboxCommits(wt, "planted", dataDir)).toMatch(
        /^its commits were not taken: objects[\w./-]* is not a (folder|regular file)$/,
      );
      expect(branchOf(repo, "planted")).toBe(start);
      sh(wt.path, ["checkout", "-q", "--", "."]);
    }
    expect(() => sh(repo, ["cat-file", "-e", secretTree])).toThrow();
  });

  test("whose objects are not what their names say are refused, and the repository keeps none of them", async () => {
    const { repo, wt } = await worktree("forged");
    const start = branchOf(repo, "forged");
    const own = sandboxGitDirOf(dataDir, "forged");
    const worker = await workerGit(wt, "forged");
    writeFileSync(path.join(wt.path, "app.txt"), "real\n");
    worker("commit", "-qam", "real");
    const blob = worker("rev-parse", "HEAD:app.txt");
    // The blob's file swapped for another object's (a valid one, under the wrong name): one the
    // repository would later skip writing, believing it had it.
    writeFileSync(path.join(root, "forged.txt"), "forged\n");
    const other = worker("hash-object", "-w", "--no-filters", path.join(root, "forged.txt"));
    const file = (id: string) => path.join(own, "objects", id.slice(0, 2), id.slice(2));
    rmSync(file(blob));
    renameSync(file(other), file(blob));
    expect(await takeSandboxCommits(wt, "forged", dataDir)).toMatch(/^its commits were not taken: git /);
    expect(branchOf(repo, "forged")).toBe(start);
    expect(() => sh(repo, ["cat-file", "-e", blob])).toThrow();
    expect(sh(repo, ["fsck", "--strict", "--no-dangling"])).toBe("");
    expect(readFileSync(path.join(wt.path, "app.txt"), "utf8")).toBe("real\n");
  });
});
