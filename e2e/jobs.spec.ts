import { expect, test } from "@playwright/test";
import { launchFromForm, signIn, snapshot, token, workdir } from "./helpers.js";

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("launch a job from the form and watch its output stream", async ({ page }, testInfo) => {
  const id = await launchFromForm(
    page,
    "kiro",
    "print 3\nsleep 2\n\u001b[32mgreen text\u001b[0m\nwrite hello.txt hi from gemini\nprint 2",
    workdir("stream"),
  );
  const output = page.getByRole("log", { name: "Job output" });
  // The first lines arrive while the worker still sleeps: streamed, not read at the end.
  await expect(output).toContainText("line 3");
  await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "running");
  await expect(output).toContainText("done kiro");
  await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "succeeded");
  await expect(output.locator(".ansi-green-fg")).toHaveText("green text");
  await expect(page.getByLabel("The exact command that ran")).toContainText("kiro-cli-chat");
  await expect(page.getByRole("heading", { name: id })).toBeVisible();
  await snapshot(page, testInfo, "job-detail");

  await page.getByLabel("Search output").fill("line 2");
  await expect(page.getByText("1 of 2 lines")).toBeVisible();
  await expect(output.locator("mark").first()).toHaveText("line 2");

  // The file it wrote, from the job's file list into the workdir browser.
  const files = page.getByRole("list", { name: "Files changed by this job" });
  await expect(files).toContainText("created");
  await files.getByRole("link", { name: "hello.txt" }).click();
  await expect(page).toHaveURL(/\/files\?/);
  await expect(page.getByRole("region", { name: "File hello.txt" })).toContainText("hi from gemini");
  await expect(page.getByRole("navigation", { name: "Workdir tree" })).toContainText("hello.txt");
  await snapshot(page, testInfo, "files");
});

test("a JSON-mode worker's events read as short lines, and raw on request", async ({ page }) => {
  await launchFromForm(page, "gemini", "write hello.txt hi\nall good", workdir("readable"));
  const output = page.getByRole("log", { name: "Job output" });
  await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "succeeded");
  await expect(output).toContainText("→ write_file");
  await expect(output).toContainText("✓ done");
  await expect(output).not.toContainText('"type":"tool_use"');
  await page.getByLabel("Search output").fill("write_file");
  await expect(page.getByText("1 of 1 line", { exact: true })).toBeVisible();
  await page.getByRole("button", { name: "Raw", exact: true }).click();
  await expect(output).toContainText('"type":"tool_use"');
});

test("the server's validation message appears at the field", async ({ page }) => {
  await page.getByRole("link", { name: "Launch", exact: true }).click();
  await page.getByLabel("Agent").selectOption("gemini");
  await page.getByLabel("Prompt").fill("print 1");
  await page.getByLabel("Workdir").fill("/etc/corral-not-allowed");
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await expect(page.locator("#launch-workdir-error")).toContainText("outside the allowed workdir roots");
  await expect(page.getByLabel("Workdir")).toHaveAttribute("aria-invalid", "true");

  await page.getByLabel("Workdir").fill(workdir("valid"));
  await page.getByLabel("Prompt").fill("");
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await expect(page.locator("#launch-prompt-error")).toContainText("the prompt is empty");
});

test("cancel a running job from the jobs page", async ({ page }, testInfo) => {
  const id = await launchFromForm(page, "kiro", "print 1\nhang", workdir("cancel"));
  await expect(page.getByRole("log", { name: "Job output" })).toContainText("line 1");
  await page.getByRole("link", { name: /^Jobs/ }).click();
  const card = page.getByRole("article", { name: `Job ${id} on kiro` });
  await expect(card).toBeVisible();
  await expect(card.getByLabel("Latest output")).toContainText("line 1");
  await snapshot(page, testInfo, "jobs-running");
  await card.getByRole("button", { name: `Cancel job ${id}` }).click();
  await expect(card).toBeHidden();
  const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: id }) });
  await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "cancelled");
  await snapshot(page, testInfo, "jobs");

  // Relaunch runs the same inputs again as a new job.
  await row.getByRole("button", { name: `Relaunch job ${id} with the same inputs` }).click();
  await page.waitForURL((url) => /\/jobs\/[a-z0-9]+$/.test(url.pathname) && !url.pathname.endsWith(id));
  const relaunchId = page.url().split("/").pop() ?? "";
  await expect(page.locator('pre[aria-label="Prompt"]')).toContainText("hang");
  // The relaunch names the job it ran again, and that job lists it.
  await expect(page.getByTestId("relaunches")).toHaveText(`Relaunch of ${id}`);
  await page.getByRole("button", { name: /^Cancel job/ }).click();
  await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "cancelled");
  await snapshot(page, testInfo, "job-relaunch-of");
  await page.getByTestId("relaunches").getByRole("link", { name: id }).click();
  await page.waitForURL((url) => url.pathname.endsWith(`/jobs/${id}`));
  await expect(page.getByTestId("relaunches")).toHaveText(`Relaunched as ${relaunchId} (cancelled)`);
  await page.getByTestId("relaunches").getByRole("link", { name: relaunchId }).click();
  await page.waitForURL((url) => url.pathname.endsWith(`/jobs/${relaunchId}`));
});

test("history filters by agent, status and text", async ({ page }, testInfo) => {
  // The desktop and phone runs share one server: each searches for its own needle.
  const needle = `unique-needle-${testInfo.project.name}`;
  await launchFromForm(page, "claude", `print 1\n${needle}`, workdir("filters"));
  await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "succeeded");
  await page.getByRole("link", { name: /^Jobs/ }).click();
  await page.getByLabel("Search").fill(needle);
  await expect(page.getByRole("table", { name: "Jobs" }).getByRole("row")).toHaveCount(2);
  await page.getByLabel("Agent").selectOption("gemini");
  await expect(page.getByText("No job matches these filters")).toBeVisible();
  await page.getByRole("button", { name: "Clear filters" }).click();
  await page.getByRole("button", { name: "cancelled" }).click();
  await expect(page).toHaveURL(/status=cancelled/);
  await page.getByRole("button", { name: "Clear filters" }).click();

  // A failed job's row says why, not only that it failed.
  const failing = `${needle}-fails`;
  const launched = await page.request.post("/api/jobs", {
    headers: { authorization: `Bearer ${token}` },
    data: { agent: "kiro", prompt: `${failing}\nfail the spec file is not valid YAML`, workdir: workdir("filters") },
  });
  expect(launched.ok()).toBe(true);
  await page.getByLabel("Search").fill(failing);
  const row = page.getByRole("table", { name: "Jobs" }).getByRole("row").filter({ hasText: failing });
  await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "failed");
  await expect(row.locator("td[data-label=Status]")).toContainText("the spec file is not valid YAML");
});

test("costs change when a priced job ends", async ({ page }, testInfo) => {
  await page.getByRole("link", { name: "Costs" }).click();
  const total = page.getByTestId("total-cost");
  await expect(total).toBeVisible();
  const before = await total.textContent();
  await launchFromForm(page, "claude", "write answer.md 42\nthe answer is 42", workdir("costs"));
  await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "succeeded");
  await expect(page.getByRole("region", { name: "Usage and cost" })).toContainText("reported");
  await page.getByRole("link", { name: "Costs" }).click();
  await expect(total).not.toHaveText(before ?? "");
  await expect(page.getByRole("region", { name: "By provider" })).toContainText("anthropic");
  await snapshot(page, testInfo, "costs");
});

test("a queued job's page says why it waits, then streams when its turn comes; the server stays up", async ({ page, request }, testInfo) => {
  const auth = { authorization: `Bearer ${token}` };
  const api = (method: "post" | "patch", url: string, data: unknown) => request[method](url, { headers: auth, data });
  expect((await api("patch", "/api/agents/kiro", { maxConcurrent: 1 })).ok()).toBe(true);
  try {
    // Busy until it is cancelled: the waiting job's turn comes when the test gives it.
    const busy = (await (await api("post", "/api/jobs", { agent: "kiro", prompt: "print 1\nhang", workdir: workdir("busy") })).json()) as {
      id: string;
    };
    const waiting = (await (await api("post", "/api/jobs", { agent: "kiro", prompt: "print 2", workdir: workdir("waiting") })).json()) as {
      id: string;
    };
    // Running now and the sidebar's badge count the same jobs: the running ones, the queued said apart.
    await page.goto("/");
    const heading = page.getByRole("heading", { name: /^Running now/ });
    await expect(heading).toContainText(/\d+ running · [1-9]\d* queued/);
    const running = /(\d+) running/.exec((await heading.textContent()) ?? "")?.[1];
    await expect(page.getByRole("status", { name: `${running} running` })).toHaveText(running ?? "");
    // Its card and its page say why it waits, naming the job it is behind.
    const behind = `kiro runs 1 at once: behind job ${busy.id}`;
    await expect(page.getByRole("article", { name: `Job ${waiting.id} on kiro` })).toContainText(behind);
    await page.goto(`/jobs/${waiting.id}`);
    await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "queued");
    await expect(page.getByRole("status").filter({ hasText: /^Queued/ })).toContainText(behind);
    await snapshot(page, testInfo, "job-queued");
    expect((await request.post(`/api/jobs/${busy.id}/cancel`, { headers: auth })).ok()).toBe(true);
    const output = page.getByRole("log", { name: "Job output" });
    await expect(output).toContainText("line 2", { timeout: 20_000 });
    await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "succeeded");
    await expect(page.getByRole("status").filter({ hasText: /^Queued/ })).toHaveCount(0);
    // The same server answered throughout: the busy job it was running was cancelled as asked.
    const ended = (await (await request.get(`/api/jobs/${busy.id}`, { headers: auth })).json()) as { status: string };
    expect(ended.status).toBe("cancelled");
  } finally {
    await api("patch", "/api/agents/kiro", { maxConcurrent: 4 });
  }
});

test("a job waiting out a retry says which attempt comes next, and when", async ({ page, request }) => {
  const auth = { authorization: `Bearer ${token}` };
  const dir = workdir("retry-wait");
  const launched = await request.post("/api/jobs", {
    headers: auth,
    data: {
      agent: "kiro",
      prompt: `fail-once ${dir}-marker 1 flaky\nprint 1`,
      workdir: dir,
      retry: { maxAttempts: 2, exitCodes: [1], backoffS: 40 },
    },
  });
  const job = (await launched.json()) as { id: string };
  try {
    await page.goto(`/jobs/${job.id}`);
    await expect(page.getByRole("status").filter({ hasText: /^Queued/ })).toContainText(/retry 2 of 2 in \d+s/);
  } finally {
    await request.post(`/api/jobs/${job.id}/cancel`, { headers: auth });
  }
});
