// @vitest-environment happy-dom
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Job, JobChanges, JobWorktree } from "@corral/shared";
import { CompareChanges } from "./compare-changes.js";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const worktree = (state: JobWorktree["state"]): JobWorktree => ({
  repo: "/w/repo",
  gitDir: "/w/repo/.git",
  path: "/w/repo.corral/abc123def456",
  branch: "corral/abc123def456",
  base: "main",
  baseCommit: "0123456789abcdef",
  state,
});

const job = (status: Job["status"], wt: JobWorktree | null) =>
  ({ id: "abc123def456", agent: "codex", status, prompt: "p", workdir: "/w/repo", model: null, timeoutS: 60, worktree: wt }) as Job;

const diff = [
  "diff --git a/answer.txt b/answer.txt",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/answer.txt",
  "@@ -0,0 +1 @@",
  "+forty-two",
  "",
].join("\n");

const changes = (state: JobWorktree["state"], patch: Partial<JobChanges> = {}): JobChanges => ({
  worktree: worktree(state),
  change: {
    commits: ["1a2b3c4 corral: what job abc123def456 (codex) left"],
    stat: " answer.txt | 1 +\n 1 file changed, 1 insertion(+)\n create mode 100644 answer.txt",
    files: 1,
    head: "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
  },
  diff,
  truncated: false,
  ...patch,
});

/** Answers the diff route as the server would, and counts how often it was asked. */
function serve(answer: () => Response) {
  const asked: string[] = [];
  vi.stubGlobal("fetch", async (url: string) => {
    asked.push(url);
    return answer();
  });
  return asked;
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

function show(j: Job) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const shown = render(
    <QueryClientProvider client={client}>
      <CompareChanges job={j} />
    </QueryClientProvider>,
  );
  const moveOn = (next: Job) =>
    shown.rerender(
      <QueryClientProvider client={client}>
        <CompareChanges job={next} />
      </QueryClientProvider>,
    );
  return { ...shown, moveOn };
}

describe("a compared job's diff", () => {
  it("shows nothing for a job that ran in its workdir, and asks for no diff", () => {
    const asked = serve(() => json(changes("active")));
    const { container } = show(job("succeeded", null));
    expect(container.textContent).toBe("");
    expect(asked).toEqual([]);
  });

  it("shows a running job's branch, its change and its diff so far", async () => {
    const asked = serve(() => json(changes("active")));
    const { container } = show(job("running", worktree("active")));
    expect(screen.getByText("corral/abc123def456")).toBeTruthy();
    await screen.findByText("1 commit · 1 file changed, 1 insertion(+)");
    expect(screen.getByText("The job is still running: this is its diff so far.")).toBeTruthy();
    await waitFor(() => expect(container.querySelector(".compare-diff .d2h-file-wrapper")).not.toBeNull());
    expect(container.querySelector(".compare-diff")?.textContent).toContain("forty-two");
    // Unified: a column is too narrow for two sides.
    expect(container.querySelector(".d2h-files-diff")).toBeNull();
    expect(asked).toEqual(["/api/jobs/abc123def456/diff"]);
  });

  it("reads the diff again once the job ends (its end commits what it left), then no more", async () => {
    const asked = serve(() => json(changes("active")));
    const { moveOn } = show(job("running", worktree("active")));
    await screen.findByText("The job is still running: this is its diff so far.");
    moveOn(job("succeeded", worktree("active")));
    await waitFor(() => expect(asked).toHaveLength(2));
    await waitFor(() => expect(screen.queryByText(/still running/)).toBeNull());
    moveOn(job("succeeded", worktree("merged")));
    expect(screen.getByText(/^Merged into main\./)).toBeTruthy();
    expect(asked).toHaveLength(2);
  });

  it("shows an ended job's diff without the running note, and says when there is no change", async () => {
    serve(() => json(changes("active", { diff: "", change: { commits: [], stat: "", files: 0, head: "" } })));
    show(job("succeeded", worktree("active")));
    await screen.findByText("No changes against main.");
    expect(screen.getByText("0 commits · 0 files changed")).toBeTruthy();
    expect(screen.queryByText(/still running/)).toBeNull();
  });

  it("reads an archived worktree's branch, and says its folder is gone", async () => {
    serve(() => json(changes("archived", { truncated: true })));
    const { container } = show(job("succeeded", worktree("archived")));
    await screen.findByText("The worktree's folder was removed after it sat unreviewed; its branch keeps every commit.");
    await waitFor(() => expect(container.querySelector(".compare-diff .d2h-file-wrapper")).not.toBeNull());
    expect(screen.getByText("The diff is cut at 2 MiB; the rest is on the branch.")).toBeTruthy();
  });

  it("says a merged or discarded branch is gone, without asking for its diff", () => {
    const asked = serve(() => json(changes("active")));
    show(job("succeeded", worktree("merged")));
    expect(screen.getByText("Merged into main. The branch is gone with its worktree, so there is no diff to show.")).toBeTruthy();
    cleanup();
    show(job("failed", worktree("discarded")));
    expect(screen.getByText("Discarded. The branch is gone with its worktree, so there is no diff to show.")).toBeTruthy();
    expect(asked).toEqual([]);
  });

  it("says in words that a branch went before the page heard (409)", async () => {
    serve(() => json({ error: "job abc123def456's worktree was merged; its branch is gone" }, 409));
    show(job("succeeded", worktree("active")));
    const told = (await screen.findByText("The branch cannot be read any more.")).closest("[role=status]");
    expect(told?.textContent).toContain("job abc123def456's worktree was merged; its branch is gone");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("says any other failure in words, with a way to try again", async () => {
    serve(() => json({ error: "git diff failed: fatal: bad object" }, 500));
    show(job("succeeded", worktree("active")));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Could not load codex's diff.");
    expect(alert.textContent).toContain("git diff failed: fatal: bad object");
    expect(screen.getByRole("button", { name: "Try again" })).toBeTruthy();
  });
});
