import { expect, type Page, test } from "@playwright/test";
import type { AgentWithAvailability, Job } from "@corral/shared";
import { isPhone, launchFromForm, setTheme, signIn, snapshot, token, workdir } from "./helpers.js";

/**
 * The job page held against a CI system's job page (issue 14, rough edges 3 and 5, and the
 * "Took" and Command card bugs): dates in the timeline, the status in the tab's title, who
 * cancelled and whether it came to SIGKILL, a cancel that does not look like a failure, cards
 * that fill their rows, row actions whose errors leave the row alone.
 */

const auth = { authorization: `Bearer ${token}` };

async function api<T>(page: Page, method: "GET" | "POST" | "PATCH", url: string, body?: unknown): Promise<T> {
  const res = await page.request.fetch(url, { method, headers: auth, data: body });
  expect(res.ok(), `${method} ${url}: ${await res.text()}`).toBe(true);
  return (await res.json()) as T;
}

const launch = (page: Page, agent: string, prompt: string, dir: string) =>
  api<Job>(page, "POST", "/api/jobs", { agent, prompt, workdir: dir, sharedWorkdir: true });

/** Cancels what a test left running, so the next one (and the next spec) finds its agent free. */
async function cancelAll(page: Page, ids: string[]): Promise<void> {
  for (const id of ids) await page.request.fetch(`/api/jobs/${id}/cancel`, { method: "POST", headers: auth });
}

async function waitForStatus(page: Page, id: string, wanted: (job: Job) => boolean): Promise<Job> {
  let job: Job | undefined;
  await expect
    .poll(async () => {
      job = await api<Job>(page, "GET", `/api/jobs/${id}`);
      return wanted(job);
    })
    .toBe(true);
  return job as Job;
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("the timeline has dates, the tab shows the status, and a cancel from the panel is recorded and not styled as a failure", async ({
  page,
}, testInfo) => {
  const id = await launchFromForm(page, "kiro", "print 1\nhang", workdir("timeline"));
  const timeline = page.getByRole("list", { name: "Status timeline" });
  const output = page.getByRole("log", { name: "Job output" });
  await expect(output).toContainText("line 1");
  // On a phone the output box is a screen's worth of the page, even with one line in it.
  if (isPhone(testInfo)) expect((await output.boundingBox())?.height ?? 0).toBeGreaterThan((page.viewportSize()?.height ?? 0) * 0.5);
  // The tab says how the job is doing, and follows it live.
  await expect(page).toHaveTitle(`▶ running · ${id} · Corral`);

  // Each moment reads as a day and a time, with the whole timestamp for machines and tooltips.
  const queued = timeline.locator("[data-step=queued] time");
  await expect(queued).toHaveText(/^today /);
  const iso = await queued.getAttribute("datetime");
  expect(Number.isNaN(Date.parse(iso ?? ""))).toBe(false);
  expect(await queued.getAttribute("title")).toMatch(/\d{4}/);
  await expect(timeline.locator("[data-step=queued]")).toContainText("launched from the panel");

  await page.getByRole("button", { name: `Cancel job ${id}` }).click();
  await expect(page).toHaveTitle(`⊘ cancelled · ${id} · Corral`);
  await expect(timeline.locator("[data-step=cancel]")).toContainText("cancel requested from the panel");
  await expect(timeline.locator("[data-step=cancel] time")).toHaveText(/^today /);
  await expect(timeline.locator("[data-step=ended]")).toContainText("cancelled");
  // This worker stopped on SIGTERM: no kill to report.
  await expect(timeline.locator("[data-step=killed]")).toHaveCount(0);

  // A cancel someone asked for is a notice, not an error: no alert, not in the danger colour.
  const notice = page.getByRole("status").filter({ hasText: "Cancel requested from the panel" });
  await expect(notice).toBeVisible();
  await expect(page.getByRole("alert")).toHaveCount(0);
  for (const theme of ["dark", "light"] as const) {
    await setTheme(page, theme);
    const colours = await notice.evaluate((el) => {
      const style = getComputedStyle(el);
      const probe = document.createElement("span");
      probe.style.color = "var(--danger)";
      document.body.append(probe);
      const danger = getComputedStyle(probe).color;
      probe.remove();
      return { text: style.color, border: style.borderTopColor, danger };
    });
    expect(colours.text, `${theme}: text colour`).not.toBe(colours.danger);
    expect(colours.border, `${theme}: border colour`).not.toBe(colours.danger);
    await snapshot(page, testInfo, `job-cancelled-${theme}`);
  }

  // Leaving the job page gives the tab its plain title back.
  await page.getByRole("link", { name: "← Jobs" }).click();
  await expect(page).toHaveTitle("Corral");
});

test("a cancel through the REST API whose worker ignores SIGTERM shows who asked and the SIGKILL after the grace period", async ({
  page,
}, testInfo) => {
  const job = await launch(page, "kiro", "ignore-term\nprint 1\nhang", workdir("sigkill"));
  await page.goto(`/jobs/${job.id}`);
  await expect(page.getByRole("log", { name: "Job output" })).toContainText("line 1");
  const res = await page.request.fetch(`/api/jobs/${job.id}/cancel`, { method: "POST", headers: { ...auth, "user-agent": "curl/8.5.0" } });
  expect(res.status()).toBe(200);
  const timeline = page.getByRole("list", { name: "Status timeline" });
  await expect(timeline.locator("[data-step=cancel]")).toContainText("cancel requested through the REST API (curl/8.5.0)");
  await expect(timeline.locator("[data-step=killed]")).toContainText("SIGKILL");
  await expect(timeline.locator("[data-step=killed]")).toContainText("grace period");
  await expect(page.getByRole("status").filter({ hasText: "killed (SIGKILL)" })).toBeVisible();
  await expect(page).toHaveTitle(`⊘ cancelled · ${job.id} · Corral`);
  await snapshot(page, testInfo, "job-sigkill");
});

test("the Command card fills its row, beside cards that share theirs", async ({ page }, testInfo) => {
  const job = await launch(page, "kiro", "print 2", workdir("layout"));
  await waitForStatus(page, job.id, (j) => j.status === "succeeded");
  await page.goto(`/jobs/${job.id}`);
  await expect(page.getByLabel("The exact command that ran")).toBeVisible();
  const box = async (name: string) => {
    const b = await page.getByRole("region", { name }).boundingBox();
    if (!b) throw new Error(`no ${name} card`);
    return b;
  };
  const [timeline, usage, files, command] = [await box("Timeline"), await box("Usage and cost"), await box("Files"), await box("Command")];
  const row = await page.locator(".job-cards").boundingBox();
  if (!row) throw new Error("no card grid");
  // The command line's card spans the whole width: no two thirds of a row left empty.
  expect(command.width).toBeGreaterThan(row.width - 2);
  if (isPhone(testInfo)) {
    for (const card of [timeline, usage, files]) expect(card.width).toBeGreaterThan(row.width - 2);
  } else {
    // At desktop width the three other cards share one row.
    expect(Math.abs(usage.y - timeline.y)).toBeLessThan(2);
    expect(Math.abs(files.y - timeline.y)).toBeLessThan(2);
    expect(command.y).toBeGreaterThan(timeline.y + timeline.height);
  }
  await snapshot(page, testInfo, "job-cards");
});

test("Relaunch is offered only on ended jobs, and its error leaves the row and the header as they were", async ({ page }, testInfo) => {
  const dir = workdir("relaunch");
  const ended = await launch(page, "gemini", "print 1", dir);
  await waitForStatus(page, ended.id, (j) => j.status === "succeeded");
  // Launched without a model, its header names the one the worker reported, as its Usage card does.
  await page.goto(`/jobs/${ended.id}`);
  await expect(page.locator(".page-head")).toContainText("gemini · gemini-2.5-flash");
  // A job now busy in the same workdir makes relaunching the ended one a conflict (409).
  const running = await api<Job>(page, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1\nhang", workdir: dir });
  try {
    await waitForStatus(page, running.id, (j) => j.status === "running");
    await page.goto(`/jobs/${running.id}`);
    await expect(page.getByRole("button", { name: `Cancel job ${running.id}` })).toBeVisible();
    await expect(page.getByRole("button", { name: /^Relaunch job/ })).toHaveCount(0);

    let measured: () => Promise<{ height: number } | null>;
    if (isPhone(testInfo)) {
      await page.goto(`/jobs/${ended.id}`);
      const head = page.locator(".page-head");
      measured = () => head.boundingBox();
    } else {
      await page.goto("/");
      const runningRow = page.getByRole("row").filter({ has: page.getByRole("link", { name: running.id }) });
      await expect(runningRow.getByRole("button", { name: `Cancel job ${running.id}` })).toBeVisible();
      await expect(runningRow.getByRole("button", { name: /^Relaunch/ })).toHaveCount(0);
      const endedRow = page.getByRole("row").filter({ has: page.getByRole("link", { name: ended.id }) });
      measured = () => endedRow.boundingBox();
    }
    const before = await measured();
    await page.getByRole("button", { name: `Relaunch job ${ended.id} with the same inputs` }).click();
    const toast = page.getByRole("alert").filter({ hasText: `Could not relaunch job ${ended.id}` });
    await expect(toast).toContainText("in use by job");
    const after = await measured();
    expect(after?.height).toBeCloseTo(before?.height ?? 0, 0);
    // The whole message is on screen, inside the window.
    const t = await toast.boundingBox();
    const viewport = page.viewportSize();
    expect(t && viewport && t.x >= 0 && t.x + t.width <= viewport.width && t.y + t.height <= viewport.height).toBe(true);
    await expect(toast.getByRole("link", { name: "Change its inputs and launch" })).toHaveAttribute("href", `/launch?from=${ended.id}`);
    await snapshot(page, testInfo, "relaunch-conflict");
    await toast.getByRole("button", { name: /^Dismiss/ }).click();
    await expect(toast).toHaveCount(0);
  } finally {
    await cancelAll(page, [running.id]);
  }
});

test("a running job's time counts up in History as it does under Running now", async ({ page }, testInfo) => {
  const job = await launch(page, "kiro", "print 1\nhang", workdir("took"));
  try {
    await waitForStatus(page, job.id, (j) => j.status === "running");
    await page.goto("/");
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: job.id }) });
    await expect(row.locator("[data-status]")).toHaveAttribute("data-status", "running");
    // History's Took column (shown at desktop width; the job's own page counts on a phone).
    const took = isPhone(testInfo) ? null : row.getByRole("cell").nth(5);
    if (!took) await page.goto(`/jobs/${job.id}`);
    const clock = took ?? page.locator(".page-head .mono.small");
    await expect(clock).toBeVisible();
    const seen = new Set<string>();
    for (let i = 0; i < 14; i++) {
      seen.add((await clock.textContent()) ?? "");
      await page.waitForTimeout(250);
    }
    // Seconds go by: at least three readings in three and a half seconds, none of them stuck at 0s.
    expect(seen.size, [...seen].join(", ")).toBeGreaterThanOrEqual(3);
    await snapshot(page, testInfo, "took-ticks");
  } finally {
    await cancelAll(page, [job.id]);
  }
});

test("the Command card tells the truth in every state: queued, running, ended, CLI not installed, in-process", async ({ page }, testInfo) => {
  const card = page.getByRole("region", { name: "Command" });
  // With kiro running one job at a time, the first runs and the second waits.
  const kiro = await api<AgentWithAvailability>(page, "GET", "/api/agents/kiro");
  await api(page, "PATCH", "/api/agents/kiro", { maxConcurrent: 1 });
  const first = await launch(page, "kiro", "print 1\nhang", workdir("command-1"));
  const second = await launch(page, "kiro", "print 1", workdir("command-2"));
  try {
    await waitForStatus(page, first.id, (j) => j.status === "running");
    await page.goto(`/jobs/${second.id}`);
    await expect(card).toContainText("Not started yet");
    await expect(card).not.toContainText("in-process");

    await page.goto(`/jobs/${first.id}`);
    await expect(card.getByLabel("The exact command that ran")).toContainText("kiro-cli-chat");
    await cancelAll(page, [first.id]);
    await page.goto(`/jobs/${second.id}`);
    await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "succeeded");
    await expect(card.getByLabel("The exact command that ran")).toContainText("kiro-cli-chat");
  } finally {
    await cancelAll(page, [first.id, second.id]);
    await api(page, "PATCH", "/api/agents/kiro", { maxConcurrent: kiro.maxConcurrent });
  }

  // A CLI that is not installed: codex's PATH leads nowhere while this part runs.
  const codex = await api<AgentWithAvailability>(page, "GET", "/api/agents/codex");
  await api(page, "PATCH", "/api/agents/codex", { env: { ...codex.env, PATH: "/nonexistent" } });
  try {
    const missing = await launch(page, "codex", "print 1", workdir("command-missing"));
    await waitForStatus(page, missing.id, (j) => j.status === "failed");
    await page.goto(`/jobs/${missing.id}`);
    await expect(card).toContainText("The worker never started: the codex CLI is not available on this server");
    await expect(card).toContainText("codex was not found on PATH");
    await expect(card).toContainText("CORRAL_CODEX_BIN");
    await expect(card).not.toContainText("in-process");
    await expect(card).not.toContainText("inside Corral");
    await snapshot(page, testInfo, "command-cli-missing");
  } finally {
    await api(page, "PATCH", "/api/agents/codex", { env: codex.env });
  }

  // Ollama's agents run inside the server: there truly is no command line.
  const local = await launch(page, "qwen", "write notes", workdir("command-ollama"));
  await waitForStatus(page, local.id, (j) => j.status !== "queued" && j.status !== "running");
  await page.goto(`/jobs/${local.id}`);
  await expect(card).toContainText("No command line: this agent runs inside Corral, talking to http://127.0.0.1:");
  await snapshot(page, testInfo, "command-in-process");
});
