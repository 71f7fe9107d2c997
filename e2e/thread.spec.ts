import { expect, type Page, test } from "@playwright/test";
import type { Job } from "@corral/shared";
import { expectAccessible, signIn, snapshot, token, workdir } from "./helpers.js";

/**
 * A job's follow-ups on its page (issue 15, follow-ups): the thread of turns, each linking to
 * its job with the one shown marked, and a Reply box that launches a follow-up and opens it. The
 * qwen agent (the fake Ollama) continues conversations; kiro's CLI cannot.
 */

const auth = { authorization: `Bearer ${token}` };

async function api<T>(page: Page, method: "GET" | "POST", url: string, body?: unknown): Promise<T> {
  const res = await page.request.fetch(url, { method, headers: auth, data: body });
  expect(res.ok(), `${method} ${url}: ${await res.text()}`).toBe(true);
  return (await res.json()) as T;
}

async function ended(page: Page, id: string): Promise<Job> {
  let job: Job | undefined;
  await expect
    .poll(async () => {
      job = await api<Job>(page, "GET", `/api/jobs/${id}`);
      return ["queued", "running"].includes(job.status);
    })
    .toBe(false);
  return job as Job;
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("Reply launches a follow-up of the thread's last job and opens it; the thread lists the turns, each linking to its job, the shown one marked", async ({
  page,
}, testInfo) => {
  const first = await api<Job>(page, "POST", "/api/jobs", { agent: "qwen", prompt: "write notes about the parser", workdir: workdir("thread") });
  const firstDone = await ended(page, first.id);
  expect(firstDone.status).toBe("succeeded");
  const firstAnswer = (firstDone.finalText ?? "").split("\n")[0] ?? "";
  expect(firstAnswer).not.toBe("");
  await page.goto(`/jobs/${first.id}`);

  const conversation = page.getByRole("region", { name: "Follow-ups" });
  // A first turn alone is no list yet, only the box to continue it.
  await expect(conversation.getByRole("list", { name: "Turns, first to last" })).toHaveCount(0);
  await expect(conversation.getByText(`Continues job ${first.id} with qwen, in its workdir.`)).toBeVisible();
  const send = conversation.getByRole("button", { name: "Send reply" });
  await expect(send).toBeDisabled();
  await conversation.getByRole("textbox", { name: "Reply" }).fill("now list the open questions");
  await send.click();

  await page.waitForURL((url) => /\/jobs\/[a-z0-9]+$/.test(url.pathname) && !url.pathname.endsWith(first.id));
  const secondId = page.url().split("/").pop() as string;
  const second = await ended(page, secondId);
  expect(second).toMatchObject({ status: "succeeded", followUpOf: first.id, conversationId: first.id, workdir: first.workdir });

  const turns = page.getByRole("region", { name: "Follow-ups" }).getByRole("list", { name: "Turns, first to last" }).getByRole("listitem");
  await expect(turns).toHaveCount(2);
  await expect(turns.nth(0)).toContainText("Turn 1");
  await expect(turns.nth(0).getByRole("group", { name: "Prompt" })).toContainText("write notes about the parser");
  // Each earlier turn shows its answer (this job's is the page's own Answer).
  await expect(turns.nth(0).getByRole("group", { name: "Answer" })).toContainText(firstAnswer);
  await expect(turns.nth(1).getByRole("group", { name: "Answer" })).toHaveCount(0);
  await expect(turns.nth(1)).toHaveAttribute("aria-current", "page");
  await expect(turns.nth(1)).toContainText("this job");
  await expect(turns.nth(1)).toContainText("now list the open questions");
  await expect(turns.nth(1).getByText("Succeeded")).toBeVisible();
  await expect(page.getByRole("region", { name: "Follow-ups" }).getByText(`Continues job ${secondId} with qwen`)).toBeVisible();
  await snapshot(page, testInfo, "thread-second-turn");
  await expectAccessible(page, "a job page with its thread");

  // Each turn links to its job; there, that turn is the marked one and the reply still goes to the last.
  await turns.nth(0).getByRole("link", { name: first.id }).click();
  await page.waitForURL(new RegExp(`/jobs/${first.id}$`));
  const again = page.getByRole("region", { name: "Follow-ups" }).getByRole("listitem");
  await expect(again).toHaveCount(2);
  await expect(again.nth(0)).toHaveAttribute("aria-current", "page");
  await expect(again.nth(1).getByRole("link", { name: secondId })).toBeVisible();
  await expect(page.getByRole("region", { name: "Follow-ups" }).getByText(`Continues job ${secondId} with qwen`)).toBeVisible();
  await snapshot(page, testInfo, "thread-first-turn");

  // Edit and relaunch of a follow-up continues the same turn again unless told otherwise.
  await page.goto(`/launch?from=${secondId}`);
  const keep = page.getByRole("checkbox", { name: `Continue the conversation of job ${first.id} (untick to start a new one)` });
  await expect(keep).toBeChecked();
  await expect(page.getByLabel("Prompt")).toHaveValue("now list the open questions");
  // Launched, it names the job it relaunched.
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await page.waitForURL((url) => /\/jobs\/[a-z0-9]+$/.test(url.pathname) && !url.pathname.endsWith(secondId));
  await expect(page.getByTestId("relaunches")).toHaveText(`Relaunch of ${secondId}`);
});

test("an agent whose kind cannot resume says so instead of offering a Reply", async ({ page }, testInfo) => {
  const job = await api<Job>(page, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1", workdir: workdir("no-resume"), sharedWorkdir: true });
  await ended(page, job.id);
  await page.goto(`/jobs/${job.id}`);
  const conversation = page.getByRole("region", { name: "Follow-ups" });
  await expect(conversation).toContainText(
    "kiro cannot take follow-ups: Corral has no way to resume its worker's session. Launch a new job instead.",
  );
  await expect(conversation.getByRole("button", { name: "Send reply" })).toHaveCount(0);
  await snapshot(page, testInfo, "thread-cannot-resume");
});

test("a reply the server refuses says why, next to the box", async ({ page }, testInfo) => {
  // Its model does not exist: the worker never reached a model, so there is no conversation to continue.
  const job = await api<Job>(page, "POST", "/api/jobs", { agent: "qwen", prompt: "hello", model: "no-such-model", workdir: workdir("refused") });
  expect((await ended(page, job.id)).status).toBe("failed");
  await page.goto(`/jobs/${job.id}`);
  const conversation = page.getByRole("region", { name: "Follow-ups" });
  await conversation.getByRole("textbox", { name: "Reply" }).fill("try again");
  await conversation.getByRole("button", { name: "Send reply" }).click();
  const alert = conversation.getByRole("alert");
  await expect(alert).toContainText("The server refused this reply.");
  await expect(alert).toContainText(`job ${job.id} has no conversation to continue: its worker never reached the model (failed)`);
  await expect(page).toHaveURL(new RegExp(`/jobs/${job.id}$`));
  await snapshot(page, testInfo, "thread-refused");
  await expectAccessible(page, "a refused reply");
});
