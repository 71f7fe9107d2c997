// @vitest-environment happy-dom
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DiscardResult, Job, JobChanges as Changes, JobWorktree } from "@corral/shared";
import { useJob } from "../hooks/use-jobs.js";
import { queryKeys } from "../lib/transport/query-keys.js";
import { DiffView, JobChanges } from "./job-changes.js";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

// A worker writes the files and names them: every part of a diff is hostile text.
const hostile = [
  'diff --git a/<img src=x onerror="alert(1)">.html b/<img src=x onerror="alert(1)">.html',
  "new file mode 100644",
  "--- /dev/null",
  '+++ b/<img src=x onerror="alert(1)">.html',
  "@@ -0,0 +1,2 @@ <script>alert(2)</script>",
  "+<script>alert(3)</script>",
  '+<a href="javascript:alert(4)">x</a>',
  "",
].join("\n");

describe("the Changes view's diff", () => {
  for (const layout of ["line-by-line", "side-by-side"] as const) {
    it(`shows a hostile diff as text, never as markup (${layout})`, () => {
      const { container } = render(<DiffView diff={hostile} layout={layout} />);
      expect(container.querySelector(".d2h-file-list-wrapper, .d2h-file-wrapper")).not.toBeNull();
      expect(container.querySelectorAll("script, img, a[href^='javascript']")).toHaveLength(0);
      expect(container.textContent).toContain("<script>alert(3)</script>");
      expect(container.textContent).toContain('<img src=x onerror="alert(1)">.html');
    });
  }
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

const job = (state: JobWorktree["state"]) =>
  ({
    id: "abc123def456",
    agent: "codex",
    status: "succeeded",
    prompt: "p",
    workdir: "/w/repo",
    model: null,
    timeoutS: 60,
    worktree: worktree(state),
  }) as Job;

const changes = (state: JobWorktree["state"]): Changes => ({
  worktree: worktree(state),
  change: {
    commits: ["1a2b3c4 add the answer"],
    stat: " answer.txt | 1 +\n 1 file changed, 1 insertion(+)",
    files: 1,
    head: "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
  },
  diff: "diff --git a/answer.txt b/answer.txt\nnew file mode 100644\n--- /dev/null\n+++ b/answer.txt\n@@ -0,0 +1 @@\n+forty-two\n",
  truncated: false,
});

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** The card as the job page shows it: for the job in the cache, which an action's answer replaces. */
function JobCard({ id }: { id: string }) {
  const j = useJob(id);
  return j.data ? <JobChanges job={j.data} /> : null;
}

/** A server holding one worktree job: its diff, and a discard that answers `discarded`. */
function serve(start: Job, discarded: Omit<DiscardResult, "branch">) {
  let current = start;
  const asked: string[] = [];
  vi.stubGlobal("fetch", async (url: string, init?: RequestInit) => {
    asked.push(`${init?.method ?? "GET"} ${url}`);
    if (url.endsWith("/diff")) return json(changes(current.worktree?.state ?? "active"));
    if (url.endsWith("/discard")) {
      // As the server keeps it: when, and where the branch pointed.
      current = { ...current, worktree: { ...worktree("discarded"), changedAt: 1_800_000_000_000, head: discarded.head } };
      return json({ branch: "corral/abc123def456", ...discarded, job: current });
    }
    if (url.includes("/merge")) {
      return json({ error: "main has changes that conflict with corral/abc123def456 in answer.txt", code: "conflict", field: "job_id" }, 409);
    }
    return json(current);
  });
  vi.stubGlobal("confirm", () => true);
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  client.setQueryData(queryKeys.jobs.detail(start.id), start);
  render(
    <QueryClientProvider client={client}>
      <JobCard id={start.id} />
    </QueryClientProvider>,
  );
  return asked;
}

describe("the Changes card", () => {
  it("reads an archived worktree's branch, says its folder went unreviewed, and still offers Merge and Discard", async () => {
    const asked = serve(job("archived"), { commits: [], head: null });
    expect(screen.getByText("The worktree's folder was removed: it sat unreviewed for days.")).toBeTruthy();
    expect(screen.getByText(/keeps every commit/).textContent).toContain("corral/abc123def456 keeps every commit");
    // No folder to open in a terminal.
    expect(screen.queryByRole("group", { name: "The worktree's folder" })).toBeNull();
    expect((screen.getByRole("button", { name: "Merge into main" }) as HTMLButtonElement).disabled).toBe(false);
    expect((screen.getByRole("button", { name: "Discard" }) as HTMLButtonElement).disabled).toBe(false);
    await screen.findByText("1a2b3c4 add the answer");
    expect(asked).toContain("GET /api/jobs/abc123def456/diff");
  });

  it("after a discard, says how many unmerged commits went and how to bring the branch back", async () => {
    serve(job("active"), { commits: ["1a2b3c4 add the answer", "9f8e7d6 start"], head: "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b" });
    expect(screen.getByRole("group", { name: "The worktree's folder" }).textContent).toBe("cd /w/repo.corral/abc123def456");
    fireEvent.click(screen.getByRole("button", { name: "Discard" }));
    await screen.findByText("2 unmerged commits went with corral/abc123def456.");
    expect(screen.getByText(/was discarded; its worktree is gone/)).toBeTruthy();
    expect(screen.getByRole("list", { name: "Commits discarded" }).textContent).toContain("9f8e7d6 start");
    expect(screen.getByText(/Git keeps it for a while/).textContent).toContain("/w/repo");
    expect(screen.getByRole("group", { name: "The command that brings the branch back" }).textContent).toBe(
      "git branch corral/abc123def456 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
    );
  });

  it("after a discard that took no unmerged commit, says only that the branch was discarded", async () => {
    serve(job("active"), { commits: [], head: "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b" });
    fireEvent.click(screen.getByRole("button", { name: "Discard" }));
    await screen.findByText(/was discarded; its worktree is gone/);
    expect(screen.queryByText(/unmerged commit/)).toBeNull();
    expect(screen.queryByText(/git branch/)).toBeNull();
  });

  it("after a reload, a discarded job's record still says where its branch pointed, and how to bring it back", () => {
    const head = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b";
    serve({ ...job("discarded"), worktree: { ...worktree("discarded"), changedAt: 1_800_000_000_000, head } }, { commits: [], head });
    expect(screen.getByText(/was discarded; its worktree is gone/)).toBeTruthy();
    expect(screen.getByText(/Git keeps it for a while/).textContent).toContain(`Its last commit was ${head}`);
    expect(screen.getByRole("group", { name: "The command that brings the branch back" }).textContent).toBe(`git branch corral/abc123def456 ${head}`);
    // Git named no commit (or the record predates it): no command to offer.
    cleanup();
    serve(job("discarded"), { commits: [], head: null });
    expect(screen.getByText(/was discarded; its worktree is gone/)).toBeTruthy();
    expect(screen.queryByText(/git branch/)).toBeNull();
  });

  it("a merged job's card offers no command to bring anything back", () => {
    serve(
      { ...job("merged"), worktree: { ...worktree("merged"), changedAt: 1_800_000_000_000, head: "feedfacefeedface" } },
      { commits: [], head: null },
    );
    expect(screen.getByText(/was merged into main; its worktree is gone/)).toBeTruthy();
    expect(screen.queryByText(/git branch/)).toBeNull();
  });

  it("a failed merge is told as a merge that failed, with git's reason; the merge names the commit whose diff is shown", async () => {
    const asked = serve(job("active"), { commits: [], head: null });
    await screen.findByText("1a2b3c4 add the answer");
    fireEvent.click(screen.getByRole("button", { name: "Merge into main" }));
    await screen.findByText("Could not merge corral/abc123def456");
    expect(screen.getByText(/conflict with corral\/abc123def456 in answer.txt/)).toBeTruthy();
    expect(asked).toContain("POST /api/jobs/abc123def456/merge?head=1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b");
  });
});
