// @vitest-environment happy-dom
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Job, JobFiles, JobWorktree } from "@corral/shared";
import { JobFilesSection } from "./job-files.js";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const worktree = (state: JobWorktree["state"]): JobWorktree => ({
  repo: "/w/repo",
  gitDir: "/w/repo/.git",
  path: "/w/.corral-worktrees/repo/abc123def456",
  branch: "corral/abc123def456",
  base: "main",
  baseCommit: "0123456789abcdef",
  state,
  changedAt: 1_800_000_000_000,
  head: "1a2b3c4d5e6f",
});

const job = (wt: JobWorktree | null) =>
  ({ id: "abc123def456", agent: "codex", status: "succeeded", workdir: wt ? wt.path : "/w/repo", worktree: wt }) as Job;

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });

function show(j: Job, files: JobFiles) {
  vi.stubGlobal("fetch", async () => json(files));
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <JobFilesSection job={j} />
    </QueryClientProvider>,
  );
}

const changed: JobFiles = {
  files: [
    { path: "answer.txt", change: "created", size: 10, at: 1 },
    { path: "old.txt", change: "deleted", size: null, at: 2 },
  ],
  cutAt: null,
};

describe("the Files card", () => {
  it("links each file still there to the workdir browser", async () => {
    show(job(worktree("active")), changed);
    const link = await screen.findByRole("link", { name: "answer.txt" });
    expect(link.getAttribute("href")).toContain(encodeURIComponent("/w/.corral-worktrees/repo/abc123def456/answer.txt"));
    expect(screen.queryByRole("link", { name: "old.txt" })).toBeNull();
    expect(screen.queryByText(/folder is gone/)).toBeNull();
  });

  for (const [state, says] of [
    ["merged", "The worktree's folder is gone: its change was merged into main."],
    ["discarded", "The worktree's folder is gone, and its branch corral/abc123def456 was discarded with it."],
    ["archived", "The worktree's folder is gone: its change is on branch corral/abc123def456 (see Changes)."],
  ] as const) {
    it(`once the worktree is ${state}, lists the files without links that would fail, and says where the change is`, async () => {
      show(job(worktree(state)), changed);
      await screen.findByText("answer.txt");
      expect(screen.getByRole("note").textContent).toBe(says);
      expect(screen.queryAllByRole("link")).toHaveLength(0);
    });
  }

  it("offers no workdir to browse when the worktree's folder is gone and no file changed", async () => {
    show(job(worktree("merged")), { files: [], cutAt: null });
    await screen.findByText(/created, changed or deleted no files/);
    expect(screen.queryByRole("link", { name: "Browse the workdir" })).toBeNull();
    expect(screen.getByText(/merged into main/)).toBeTruthy();
    cleanup();
    show(job(null), { files: [], cutAt: null });
    expect((await screen.findByRole("link", { name: "Browse the workdir" })).getAttribute("href")).toBe(
      `/files?workdir=${encodeURIComponent("/w/repo")}`,
    );
  });
});
