import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, type Page, test } from "@playwright/test";
import type { Job } from "@corral/shared";
import { expectAccessible, isPhone, signIn, snapshot, token, workdir } from "./helpers.js";

/**
 * One prompt to many agents in the panel (issue 16, part 3): the Launch page's multi-select starts
 * one job per agent and opens the Compare view, where their answers, files changed, durations and
 * costs stand side by side (one under another on a phone), live while they run.
 */

const auth = { authorization: `Bearer ${token}` };
// In the registry's order, which the ticked agents (and so the jobs and columns) keep.
const THREE = ["claude", "codex", "gemini"];

async function openLaunchForMany(page: Page, agents: string[]): Promise<void> {
  await page.getByRole("link", { name: "Launch", exact: true }).click();
  await page.getByRole("checkbox", { name: "Several at once, compared side by side" }).check();
  const picks = page.getByRole("group", { name: "Agents" });
  // The boxes come with the agents list.
  await expect(picks.getByRole("checkbox", { name: "gemini", exact: true })).toBeVisible();
  for (const box of await picks.getByRole("checkbox").all()) {
    const name = (await box.evaluate((el) => el.closest("label")?.textContent ?? "")).trim();
    if (agents.includes(name)) await box.check();
    else await box.uncheck();
  }
  for (const agent of agents) await expect(picks.getByRole("checkbox", { name: agent, exact: true })).toBeChecked();
}

/** A git repository with one commit on `main`, for jobs that run in worktrees of it. */
function repository(dir: string): string {
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: dir,
      env: { ...process.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" },
    });
  mkdirSync(dir, { recursive: true });
  git("init", "-q", "-b", "main");
  writeFileSync(path.join(dir, "README.md"), "start\n");
  git("add", ".");
  git("commit", "-q", "-m", "start");
  return dir;
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("ticking three agents launches one job each and opens them side by side, live, then with answers, files, durations and costs", async ({
  page,
}, testInfo) => {
  await openLaunchForMany(page, THREE);
  await page.getByRole("textbox", { name: "Prompt" }).fill("sleep 1.5\nwrite answer.txt hi\nhello");
  await page.locator("#launch-workdir").fill(workdir("compare-three"));
  await page.getByRole("button", { name: "Launch on 3 agents" }).click();
  await page.waitForURL(/\/compare\?jobs=[a-z0-9]+,[a-z0-9]+,[a-z0-9]+$/);
  await expect(page.getByRole("heading", { name: "Compare 3 jobs" })).toBeVisible();

  const columns = THREE.map((agent) => page.getByRole("region", { name: new RegExp(`^${agent}, job [a-z0-9]+$`) }));
  // Live: a column shows its job before it has ended.
  await expect(columns[0]?.locator('[data-status="running"], [data-status="queued"]') ?? page).toBeVisible();
  await snapshot(page, testInfo, "compare-running");

  for (const [i, column] of columns.entries()) {
    await expect(column.locator('[data-status="succeeded"]')).toBeVisible({ timeout: 20_000 });
    await expect(column.getByRole("heading", { name: THREE[i] })).toBeVisible();
    await expect(column.getByText(`done ${THREE[i]}`)).toBeVisible();
    await expect(column.getByRole("listitem").filter({ hasText: "answer.txt" })).toContainText("created");
    await expect(column.getByText("Duration")).toBeVisible();
    await expect(column.getByText("Cost")).toBeVisible();
  }
  // Claude's and Codex's fakes report usage: their cost shows, in dollars.
  await expect(columns[0]?.getByText(/^\$\d/) ?? page).toBeVisible();

  // Side by side on a desktop, one under another on a phone, none wider than the page.
  const boxes = await Promise.all(columns.map(async (c) => (await c.boundingBox()) ?? { x: 0, y: 0, width: 0, height: 0 }));
  const width = page.viewportSize()?.width ?? 0;
  for (const box of boxes) expect(box.x + box.width).toBeLessThanOrEqual(width);
  if (isPhone(testInfo)) {
    expect(new Set(boxes.map((b) => Math.round(b.x))).size).toBe(1);
    expect(boxes[1]?.y ?? 0).toBeGreaterThan(boxes[0]?.y ?? 0);
  } else {
    expect(boxes[1]?.x ?? 0).toBeGreaterThan(boxes[0]?.x ?? 0);
    expect(Math.round(boxes[1]?.y ?? 0)).toBe(Math.round(boxes[0]?.y ?? 0));
  }
  await snapshot(page, testInfo, "compare-ended");
  await expectAccessible(page, "the Compare view");

  // Each column links to its job, and each job of the group back to them all.
  await columns[2]?.getByRole("link", { name: /^[a-z0-9]{12}$/ }).click();
  await page.waitForURL(/\/jobs\/[a-z0-9]+$/);
  await snapshot(page, testInfo, "job-of-a-group");
  await page.getByRole("link", { name: "Compare with the agents launched with it" }).click();
  await page.waitForURL(/\/compare\?group=[a-z0-9]+$/);
  for (const column of columns) await expect(column.locator('[data-status="succeeded"]')).toBeVisible();
});

test("the Launch page with several agents ticked is accessible and says what it will do; one ticked is an ordinary launch", async ({
  page,
}, testInfo) => {
  await openLaunchForMany(page, ["gemini", "codex"]);
  await expect(page.getByRole("button", { name: "Launch on 2 agents" })).toBeVisible();
  await expect(page.getByText("each agent works in its own folder here (empty: each in its own workdir)")).toBeVisible();
  await expect(page.getByRole("checkbox", { name: "One shared workdir: every agent writes in it, at once" })).toBeVisible();
  await snapshot(page, testInfo, "launch-many");
  await expectAccessible(page, "the Launch page with several agents");

  await openLaunchForMany(page, ["kiro"]);
  await page.getByRole("textbox", { name: "Prompt" }).fill("hello");
  await page.locator("#launch-workdir").fill(workdir("compare-one"));
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await page.waitForURL(/\/jobs\/[a-z0-9]+$/);
});

test("a refusal launches none and says which agent; the form stays as it was", async ({ page }, testInfo) => {
  const base = workdir("compare-busy");
  const busy = await page.request.post("/api/jobs", { headers: auth, data: { agent: "kiro", prompt: "hang", workdir: `${base}/codex` } });
  expect(busy.ok(), await busy.text()).toBe(true);
  const busyJob = (await busy.json()) as Job;
  try {
    const before = ((await (await page.request.get("/api/jobs?limit=1", { headers: auth })).json()) as { total: number }).total;
    await openLaunchForMany(page, ["gemini", "codex"]);
    await page.getByRole("textbox", { name: "Prompt" }).fill("hello");
    await page.locator("#launch-workdir").fill(base);
    await page.getByRole("button", { name: "Launch on 2 agents" }).click();
    await expect(page.getByText(`Job ${busyJob.id} is still using codex's workdir.`, { exact: false })).toBeVisible();
    await expect(page).toHaveURL(/\/launch$/);
    const after = ((await (await page.request.get("/api/jobs?limit=1", { headers: auth })).json()) as { total: number }).total;
    expect(after).toBe(before);
    await snapshot(page, testInfo, "launch-many-refused");
  } finally {
    await page.request.post(`/api/jobs/${busyJob.id}/cancel`, { headers: auth });
  }
});

test("launched in worktrees, each column shows its branch's diff, then that it was merged or discarded", async ({ page }, testInfo) => {
  const repo = repository(workdir("compare-worktrees"));
  const agents = ["codex", "gemini"];
  await openLaunchForMany(page, agents);
  // One line far wider than a phone: it scrolls inside the diff's box.
  await page.getByRole("textbox", { name: "Prompt" }).fill(`write answer.txt ${"forty-two".repeat(60)}\nhello`);
  await page.locator("#launch-workdir").fill(repo);
  await page.getByRole("checkbox", { name: /^In a git worktree of its repository/ }).check();
  await page.getByRole("button", { name: "Launch on 2 agents" }).click();
  await page.waitForURL(/\/compare\?jobs=[a-z0-9]+,[a-z0-9]+$/);
  const ids = new URL(page.url()).searchParams.get("jobs")?.split(",") ?? [];

  const columns = agents.map((agent) => page.getByRole("region", { name: new RegExp(`^${agent}, job [a-z0-9]+$`) }));
  for (const [i, column] of columns.entries()) {
    await expect(column.locator('[data-status="succeeded"]')).toBeVisible({ timeout: 20_000 });
    await expect(column.getByRole("heading", { name: "Changes" })).toBeVisible();
    await expect(column.getByText(`Branch corral/${ids[i]} from main`)).toBeVisible();
    // What the worker left is committed at its end: the branch holds the whole change.
    await expect(column.getByText("1 commit · 1 file changed, 1 insertion(+)")).toBeVisible();
    await expect(column.locator(".compare-diff .d2h-file-wrapper")).toContainText("answer.txt");
  }
  // The diffs stand side by side (one under another on a phone); a long line scrolls in its box, never the page.
  const widths = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  expect(widths[0]).toBeLessThanOrEqual(widths[1] ?? 0);
  await snapshot(page, testInfo, "compare-worktrees");
  await expectAccessible(page, "the Compare view with diffs");

  const [merged, discarded] = ids;
  expect((await page.request.post(`/api/jobs/${merged}/merge`, { headers: auth })).ok()).toBe(true);
  expect((await page.request.post(`/api/jobs/${discarded}/discard`, { headers: auth })).ok()).toBe(true);
  await expect(columns[0]?.getByText(/^Merged into main\./) ?? page).toBeVisible();
  await expect(columns[1]?.getByText(/^Discarded\./) ?? page).toBeVisible();
  await expect(page.locator(".compare-diff")).toHaveCount(0);
});
