import { expect, type Page, test } from "@playwright/test";
import type { Job } from "@corral/shared";
import { signIn, snapshot, token, workdir } from "./helpers.js";

/**
 * Records that must not lie (issue 26, items 15 and 16): the output of many short lines loads in
 * both views with its true line count, and a retried job's page tells each attempt's story.
 */

const auth = { authorization: `Bearer ${token}` };

async function finished(page: Page, body: Record<string, unknown>): Promise<Job> {
  const res = await page.request.post("/api/jobs", { headers: auth, data: body });
  expect(res.ok(), await res.text()).toBe(true);
  const { id } = (await res.json()) as Job;
  let job: Job | undefined;
  await expect
    .poll(
      async () => {
        job = (await (await page.request.get(`/api/jobs/${id}`, { headers: auth })).json()) as Job;
        return ["succeeded", "failed"].includes(job.status);
      },
      { timeout: 60_000 },
    )
    .toBe(true);
  return job as Job;
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("an output of 3,000,000 bytes of short lines loads in the Readable and Raw views, every line counted", async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  const job = await finished(page, { agent: "gemini", prompt: "bytes 3000000", workdir: workdir("short-lines") });
  await page.goto(`/jobs/${job.id}`);
  const toolbar = page.locator(".output-toolbar");
  // 1,500,000 lines of "x" and the fake's few JSON events read as lines of their own.
  await expect(toolbar).toContainText(/1,500,0\d\d lines/, { timeout: 90_000 });
  await expect(page.getByRole("log", { name: "Job output" })).toContainText("earlier lines not kept in the browser");
  await expect(page.getByRole("log", { name: "Job output" })).not.toContainText("loading output…");
  await page.getByRole("button", { name: "Raw" }).click();
  await expect(toolbar).toContainText(/1,500,0\d\d lines/, { timeout: 90_000 });
  await snapshot(page, testInfo, "short-lines");
});

test("a job retried three times: a timeline step per attempt with its own error, usage per attempt, the file it created", async ({
  page,
}, testInfo) => {
  const dir = workdir("retried");
  const job = await finished(page, {
    agent: "claude",
    workdir: dir,
    prompt: `write made.txt attempt\nsleep 1\nfail-until ${dir}.runs 2 1 boom from run`,
    retry: { maxAttempts: 3, exitCodes: [1], backoffS: 1 },
  });
  expect(job.status).toBe("succeeded");
  await page.goto(`/jobs/${job.id}`);
  const timeline = page.getByRole("list", { name: "Status timeline" });
  await expect(timeline.locator("[data-step=attempt-1]")).toContainText("attempt 1 failed");
  await expect(timeline.locator("[data-step=attempt-1]")).toContainText("boom from run 1");
  await expect(timeline.locator("[data-step=attempt-1]")).not.toContainText("boom from run 2");
  await expect(timeline.locator("[data-step=attempt-2]")).toContainText("boom from run 2");
  await expect(timeline.locator("[data-step=attempt-3]")).toContainText("attempt 3 succeeded");
  await expect(timeline.locator("[data-step=ended]")).toContainText("over 3 attempts");
  // The header's duration runs from the first attempt's start: three runs of a second and two backoffs.
  await expect(page.locator(".page-head .mono").nth(1)).toHaveText(/^[3-9]s$|^\d\d+s$/);
  await expect(page.getByRole("table", { name: "Usage per attempt" }).locator("tbody tr")).toHaveCount(3);
  await expect(page.getByRole("list", { name: "Files changed by this job" })).toContainText("created");
  await expect(page.getByRole("list", { name: "Files changed by this job" })).not.toContainText("modified");
  await snapshot(page, testInfo, "retried-job");
});
