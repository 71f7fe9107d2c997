import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type APIRequestContext, expect, type Locator, type Page, test } from "@playwright/test";
import { launchFromForm, root, signIn, snapshot, token, workdir } from "./helpers.js";

/*
 * The job output as a daily tool (issue 14): a long streamed answer, line numbers of a long
 * log, counts in words, one token count, a server that stops under an open page, and the
 * Running-now cards' latest line.
 */

const auth = { authorization: `Bearer ${token}` };

/** Launches a job over REST (as an MCP client's job would start) and returns its id. */
async function launch(request: APIRequestContext, agent: string, prompt: string, dir: string, base = ""): Promise<string> {
  const res = await request.post(`${base}/api/jobs`, { headers: auth, data: { agent, prompt, workdir: dir } });
  expect(res.status(), await res.text()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const statusOf = (page: Page) => page.locator("[data-status]").first();
const log = (page: Page) => page.getByRole("log", { name: "Job output" });

/** Searches the shown output and returns what the search box says ("1 of 1 line", "no match"). */
async function search(page: Page, query: string): Promise<Locator> {
  await page.getByLabel("Search output").fill(query);
  return page.getByRole("search", { name: "Search in output" }).locator("[aria-live]");
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("a long streamed answer reads as lines that grow live, wrapped and searchable to its end", async ({ page }, testInfo) => {
  // 150 ticks of ~30 characters, streamed as one answer in 150 pieces: far past 2,000 characters.
  const long = `${"long-line ".repeat(300)}END-OF-LONG`;
  const id = await launch(page.request, "gemini", `${long}\nticks 12 150`, workdir("long-answer"));
  await page.goto(`/jobs/${id}`);
  const output = log(page);
  await expect(output).toContainText("tick 3 ");
  // It grows while the job runs: lines far past where a 2,000-character cut froze it.
  await expect(output).toContainText("tick 100 ", { timeout: 30_000 });
  await expect(statusOf(page)).toHaveAttribute("data-status", "running");
  await expect(await search(page, "tick 120 ")).toHaveText("1 of 1 line", { timeout: 30_000 });
  await expect(statusOf(page)).toHaveAttribute("data-status", "succeeded", { timeout: 30_000 });
  // Searchable to its end: the last tick and the end of a 3,000-character line are found.
  await expect(await search(page, "tick 150 ")).toHaveText("1 of 1 line");
  await expect(output.locator("mark")).toHaveText("tick 150 ");
  await expect(await search(page, "END-OF-LONG")).toHaveText("1 of 1 line");
  await expect(output.locator("mark")).toBeVisible();
  // Wrapped: the long line folds inside the log instead of running off to the side.
  const overflow = await output.evaluate((el) => el.scrollWidth - el.clientWidth);
  expect(overflow).toBeLessThanOrEqual(1);
  await expect(output).not.toContainText('"type"');
  // The answer, as long as the output, shows its start until *Show all*.
  const answer = page.getByRole("region", { name: "Answer" });
  await expect(answer).toContainText("long-line long-line");
  await expect(answer).not.toContainText("tick 150 ");
  await snapshot(page, testInfo, "long-answer");
  await answer.getByRole("button", { name: /^Show all \(\d+ lines\)$/ }).click();
  await expect(answer).toContainText("tick 150 ");
  await answer.getByRole("button", { name: "Show less" }).click();
  await expect(answer).not.toContainText("tick 150 ");
});

test("line numbers of a log past a million lines stay clear of the text", async ({ page }, testInfo) => {
  // 1,000,002 lines of "x" (the browser keeps the last 100,000, numbered as in the whole log).
  const id = await launch(page.request, "kiro", "bytes 2000004", workdir("gutter"));
  await page.goto(`/jobs/${id}`);
  await expect(statusOf(page)).toHaveAttribute("data-status", "succeeded", { timeout: 45_000 });
  const output = log(page);
  await expect(output.locator(".ln", { hasText: /^1000002$/ })).toBeVisible({ timeout: 30_000 });
  // The count says what is shown of the whole (the x lines and the worker's closing line); kiro's answer is its output, shown once.
  await expect(page.locator(".output-toolbar")).toContainText("the last 100,000 of 1,000,003 lines");
  await expect(page.getByRole("heading", { name: "Answer" })).toHaveCount(0);
  const rows = await output.locator(".output-line").evaluateAll((els) =>
    els
      .map((row) => {
        const ln = row.querySelector(".ln");
        const text = row.querySelector(".ln + span");
        if (!ln?.textContent || !text) return null;
        const digits = document.createRange();
        digits.selectNodeContents(ln);
        return {
          n: ln.textContent,
          right: digits.getBoundingClientRect().right,
          left: ln.getBoundingClientRect().left,
          text: text.getBoundingClientRect().left,
        };
      })
      .filter((r) => r !== null),
  );
  expect(rows.length).toBeGreaterThan(5);
  for (const row of rows) {
    expect(row.right, `line ${row.n}`).toBeLessThan(row.text);
    expect(row.left, `line ${row.n}`).toBeGreaterThanOrEqual(0);
  }
  // The log alone: the page holds much else.
  await output.screenshot({ path: testInfo.outputPath("gutter.png") });
});

test("counts read as words: 1 line, 1 of 1 line, 2 lines", async ({ page }, testInfo) => {
  // One line of output: the worker prints it and exits before its closing line.
  await launchFromForm(page, "kiro", "print 1\nexit 0", workdir("wording"));
  await expect(statusOf(page)).toHaveAttribute("data-status", "succeeded");
  const toolbar = page.locator(".output-toolbar");
  await expect(log(page)).toContainText("line 1");
  await expect(toolbar.getByText(/^\d+ lines?$/)).toHaveText("1 line");
  await expect(await search(page, "line 1")).toHaveText("1 of 1 line");
  await snapshot(page, testInfo, "wording");
  await launchFromForm(page, "kiro", "print 2\nexit 0", workdir("wording"));
  await expect(statusOf(page)).toHaveAttribute("data-status", "succeeded");
  await expect(toolbar.getByText(/^\d+ lines?$/)).toHaveText("2 lines");
  await expect(await search(page, "line")).toHaveText("1 of 2 lines");
});

test("the Readable summary and the Usage card give the same token counts", async ({ page }, testInfo) => {
  // A tool turn with thinking tokens: gemini's summary line once left those out of "out".
  await launchFromForm(page, "gemini", "write tokens.txt hi\nall good", workdir("tokens"));
  await expect(statusOf(page)).toHaveAttribute("data-status", "succeeded");
  const summary = log(page).getByText(/✓ done · /);
  await expect(summary).toBeVisible();
  const [, input, out] = /([\d,]+) in \/ ([\d,]+) out/.exec((await summary.textContent()) ?? "") ?? [];
  const usage = page.getByRole("region", { name: "Usage and cost" });
  const fact = (name: string) => usage.locator("dt", { hasText: name }).locator("+ dd");
  await expect(fact("Tokens out")).toHaveText((out ?? "").replace(",", ""));
  expect(Number(out)).toBe(59);
  expect(Number(input?.replace(",", ""))).toBeGreaterThan(0);
  await snapshot(page, testInfo, "tokens");
});

/** A Corral of this spec's own, so stopping it leaves the shared e2e server alone. */
class OwnServer {
  private child: ChildProcess | null = null;
  readonly port = Number(process.env.CORRAL_E2E_PORT) + 600 + (test.info().project.name === "phone" ? 1 : 0);
  readonly base = `http://127.0.0.1:${this.port}`;
  private readonly home = path.join(root, `own-server-${test.info().project.name}`);

  async start(): Promise<void> {
    const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
    mkdirSync(this.home, { recursive: true });
    this.child = spawn(process.execPath, [path.join(repo, "apps/server/dist/server.js")], {
      stdio: "ignore",
      env: {
        ...process.env,
        HOME: this.home,
        PATH: `${path.join(repo, "apps/server/test/fixtures/bin")}${path.delimiter}${process.env.PATH ?? ""}`,
        CORRAL_PORT: String(this.port),
        CORRAL_TOKEN: token,
        CORRAL_DATA_DIR: path.join(this.home, "data"),
        CORRAL_WORKDIR_ROOTS: root,
        CORRAL_LOG_LEVEL: "warn",
      },
    });
    await expect.poll(async () => (await fetch(`${this.base}/api/health`).catch(() => null))?.status, { timeout: 20_000 }).toBe(200);
  }

  /** A graceful stop: the workers keep running, as they do when a person stops Corral. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

test("a job page keeps its output while the server is down and resumes without a gap or a repeat", async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  const server = new OwnServer();
  await server.start();
  try {
    await page.goto(`${server.base}/?token=${token}`);
    await page.waitForURL((url) => !url.search.includes("token="));
    // A streamed answer: the Readable view and the raw output both have to resume.
    const id = await launch(page.request, "gemini", "ticks 4 60", workdir("offline"), server.base);
    // The agents list (which says the job's output has a Readable view) fails to load, as a read
    // in flight when the server stops does: it has to be read again once the server is back.
    await page.route("**/api/agents", (route) => route.abort());
    await page.goto(`${server.base}/jobs/${id}`);
    const output = log(page);
    await expect(output).toContainText("tick 6 ");
    await page.unroute("**/api/agents");
    await server.stop();
    // What was loaded stays, under a note saying why nothing moves.
    const banner = page.getByRole("status").filter({ hasText: "not answering" });
    await expect(banner).toBeVisible({ timeout: 20_000 });
    await expect(output).toContainText("tick 6 ");
    await expect(page.getByText(/Could not load job/)).toHaveCount(0);
    await snapshot(page, testInfo, "offline");
    // Ticks go on meanwhile (the worker outlives the server); the page catches up once it is back.
    await page.waitForTimeout(3000);
    await server.start();
    await expect(banner).toHaveCount(0, { timeout: 30_000 });
    await expect(statusOf(page)).toHaveAttribute("data-status", "succeeded", { timeout: 45_000 });
    await expect(output).toContainText("✓ done");
    // Every tick once in either view, those printed while the server was down included, and as
    // many lines as a fresh load of the page shows.
    const lineCount = page.locator(".output-toolbar").getByText(/^\d[\d,]* lines?$/);
    const counts: string[] = [];
    for (const view of ["Readable", "Raw"]) {
      await page.getByRole("button", { name: view, exact: true }).click();
      for (const n of [1, 7, 20, 30, 45, 60]) await expect(await search(page, `tick ${n} `), `${view}: tick ${n}`).toHaveText("1 of 1 line");
      counts.push((await lineCount.textContent()) ?? "");
    }
    await page.reload();
    await expect(output).toContainText("✓ done");
    await expect(lineCount).toHaveText(counts[0] ?? "");
    await page.getByRole("button", { name: "Raw", exact: true }).click();
    await expect(lineCount).toHaveText(counts[1] ?? "");
  } finally {
    await server.stop();
  }
});

test("Running now shows each JSON-mode worker's latest line as readable text, as it changes", async ({ page }, testInfo) => {
  const agents = ["gemini", "claude", "codex", "opencode"];
  // gemini streams its answer (the ticks); the others print their tool call's turn, then wait.
  const prompt = (agent: string) => (agent === "gemini" ? "write started.txt hi\nticks 2 60" : "write started.txt hi\nsleep 30");
  const ids = await Promise.all(agents.map((a) => launch(page.request, a, prompt(a), workdir(`running-${a}`))));
  try {
    await page.goto("/");
    const latest = (i: number) => page.getByRole("article", { name: `Job ${ids[i]} on ${agents[i]}` }).getByRole("group", { name: "Latest output" });
    for (const [i, agent] of agents.entries()) {
      // The answer so far, the tool call's result, or the step's usage: never the JSON event.
      await expect(latest(i), agent).toHaveText(/^(tick \d+ |← ok|· step done)/, { timeout: 20_000 });
      await expect(latest(i), agent).not.toContainText("{");
    }
    const tick = async () => Number(/^tick (\d+) /.exec((await latest(0).textContent()) ?? "")?.[1]);
    const first = await tick();
    await expect.poll(tick, { message: "the card follows the running answer", timeout: 20_000 }).toBeGreaterThan(first + 2);
    await snapshot(page, testInfo, "running-now");
  } finally {
    for (const id of ids) await page.request.post(`/api/jobs/${id}/cancel`, { headers: auth });
  }
});
