import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { git, GitError } from "./git.js";

const root = mkdtempSync(path.join(tmpdir(), "corral-git-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const marker = path.join(root, "RAN");
const evil = path.join(root, "evil.sh");
// Records that it ran, then behaves as a harmless filter would (copies stdin to stdout).
writeFileSync(evil, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`);
chmodSync(evil, 0o755);
const ran = () => (existsSync(marker) ? readFileSync(marker, "utf8") : "");
const as = { env: { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@x", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@x" } };

/** A repository whose config, hooks, attributes and an included file name `evil` everywhere git would run a program. */
async function hostileRepo(name: string): Promise<string> {
  const repo = path.join(root, name);
  mkdirSync(repo);
  await git(repo, ["init", "-q", "-b", "main"]);
  await git(repo, ["commit", "-q", "--allow-empty", "-m", "first"], as);
  const included = path.join(root, `${name}.inc`);
  writeFileSync(included, `[filter "inc"]\n\tclean = ${evil}\n\tsmudge = ${evil}\n`);
  writeFileSync(
    path.join(repo, ".git/config"),
    `${readFileSync(path.join(repo, ".git/config"), "utf8")}[core]\n\tfsmonitor = ${evil}\n\thooksPath = ${root}\n\tsshCommand = ${evil}\n\tpager = ${evil}\n\teditor = ${evil}\n` +
      `[filter "x"]\n\tclean = ${evil}\n\tsmudge = ${evil}\n\trequired = true\n[filter "a=b"]\n\tprocess = ${evil}\n` +
      `[diff "x"]\n\ttextconv = ${evil}\n\tcommand = ${evil}\n[diff]\n\texternal = ${evil}\n[merge "x"]\n\tdriver = ${evil} %O %A %B\n` +
      `[include]\n\tpath = ${included}\n[credential]\n\thelper = ${evil}\n[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = ${evil}\n`,
  );
  for (const hook of ["pre-commit", "post-checkout", "post-commit", "post-merge", "reference-transaction", "post-index-change"]) {
    writeFileSync(path.join(repo, ".git/hooks", hook), `#!/bin/sh\n${evil}\n`);
    chmodSync(path.join(repo, ".git/hooks", hook), 0o755);
    writeFileSync(path.join(root, hook), `#!/bin/sh\n${evil}\n`);
    chmodSync(path.join(root, hook), 0o755);
  }
  writeFileSync(path.join(repo, ".gitattributes"), "*.x filter=x diff=x merge=x\n*.y filter=a=b\n*.i filter=inc\n");
  return repo;
}

describe("git on a repository a worker wrote", () => {
  test("runs none of the programs its config, hooks, attributes or includes name", async () => {
    const repo = await hostileRepo("hostile");
    writeFileSync(path.join(repo, "f.x"), "one\n");
    writeFileSync(path.join(repo, "g.y"), "one\n");
    writeFileSync(path.join(repo, "h.i"), "one\n");
    await git(repo, ["status", "--porcelain"]);
    await git(repo, ["add", "-A"]);
    await git(repo, ["commit", "-q", "-m", "two"], as);
    await git(repo, ["worktree", "add", "-q", "-b", "side", path.join(root, "side"), "HEAD"]);
    writeFileSync(path.join(root, "side", "f.x"), "side\n");
    await git(path.join(root, "side"), ["commit", "-q", "-am", "side"], as);
    writeFileSync(path.join(repo, "f.x"), "main\n");
    await git(repo, ["commit", "-q", "-am", "main"], as);
    await git(repo, ["diff", "HEAD~1", "--stat"]);
    await git(repo, ["log", "-p", "-1"]);
    // Both changed f.x: git's own text merge reports the conflict (the repository's driver never runs).
    await expect(git(repo, ["merge", "--no-edit", "side"], as)).rejects.toThrow(/CONFLICT \(content\): Merge conflict in f\.x/);
    await git(repo, ["merge", "--abort"]);
    rmSync(path.join(repo, "f.x"));
    await git(repo, ["checkout", "--", "f.x"]);
    expect(ran()).toBe("");
    // The same repository, with the user's git: the programs do run (the test could fail).
    execFileSync("git", ["status"], { cwd: repo, stdio: "ignore" });
    expect(ran()).not.toBe("");
  });

  test("a git that does not finish is killed, and a failure says what git said", async () => {
    const repo = path.join(root, "plain");
    mkdirSync(repo);
    await git(repo, ["init", "-q"]);
    await expect(git(repo, ["rev-parse", "--verify", "--quiet", "nope^{commit}"])).rejects.toMatchObject({ code: 1 });
    await expect(git(repo, ["checkout", "no-such-branch"])).rejects.toThrow(/git checkout: .*no-such-branch/);
    expect((await git(repo, ["diff", "--quiet"], { okCodes: [1] })).stdout).toBe("");
    // A config that includes a FIFO nobody writes: git waits on it until it is killed.
    const fifo = path.join(root, "fifo");
    execFileSync("mkfifo", [fifo]);
    writeFileSync(path.join(repo, ".git/config"), `${readFileSync(path.join(repo, ".git/config"), "utf8")}[include]\n\tpath = ${fifo}\n`);
    await expect(git(repo, ["status"], { timeoutMs: 500 })).rejects.toThrow(/did not finish in 1 s/);
  });
});
