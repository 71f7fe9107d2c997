import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, type Page, test } from "@playwright/test";
import type { Job } from "@corral/shared";
import { expectAccessible, isPhone, setTheme, signIn, snapshot, type Theme, token, workdir } from "./helpers.js";

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

/** A git repository with one commit on `main` (a README, and `files` if given), for jobs that run in worktrees of it. */
function repository(dir: string, files: Record<string, string> = {}): string {
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: dir,
      env: { ...process.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" },
    });
  mkdirSync(dir, { recursive: true });
  git("init", "-q", "-b", "main");
  writeFileSync(path.join(dir, "README.md"), "start\n");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
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
  await page.getByRole("textbox", { name: "Prompt" }).fill("sleep 2.5\nwrite answer.txt hi\nhello");
  await page.locator("#launch-workdir").fill(workdir("compare-three"));
  await page.getByRole("button", { name: "Launch on 3 agents" }).click();
  await page.waitForURL(/\/compare\?jobs=[a-z0-9]+,[a-z0-9]+,[a-z0-9]+$/);
  await expect(page.getByRole("heading", { name: "Compare 3 jobs" })).toBeVisible();

  const columns = THREE.map((agent) => page.getByRole("region", { name: new RegExp(`^${agent}, job [a-z0-9]+$`) }));
  // Live: a column shows its job before it has ended, its output read as the job page's Readable view, never the CLI's JSON.
  await expect(columns[0]?.locator('[data-status="running"], [data-status="queued"]') ?? page).toBeVisible();
  const gemini = columns[2] ?? page.locator("none");
  await expect(gemini.getByText("Output so far")).toBeVisible();
  await expect(gemini.locator("pre")).toContainText("· session started · gemini-2.5-flash");
  await expect(gemini.locator("pre")).not.toContainText('"type"');
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
  // Turned to several, it ticks no agent nobody chose, and its hints tell of none.
  await page.getByRole("link", { name: "Launch", exact: true }).click();
  await expect(page.getByLabel("Agent", { exact: true })).not.toHaveValue("");
  await page.getByRole("checkbox", { name: "Several at once, compared side by side" }).check();
  const picks = page.getByRole("group", { name: "Agents" });
  await expect(picks.getByRole("checkbox")).not.toHaveCount(0);
  await expect(picks.getByRole("checkbox", { checked: true })).toHaveCount(0);
  await expect(page.locator("#launch-model-hint")).toHaveText("empty: each agent's own default");
  await expect(page.locator("#launch-timeout-hint")).toHaveText("empty: each agent's own default");
  await expect(page.locator("#launch-workdir-hint")).toHaveText("Recent and allowed directories are offered");
  await expect(page.locator("#launch-model")).toHaveAttribute("placeholder", "");
  await snapshot(page, testInfo, "launch-many-none-ticked");

  await openLaunchForMany(page, ["gemini", "codex"]);
  await expect(page.getByRole("button", { name: "Launch on 2 agents" })).toBeVisible();
  await expect(page.locator("#launch-timeout-hint")).toHaveText(/^empty: each agent's own \(codex: \d+s, gemini: \d+s\)$/);
  await expect(page.locator("#launch-model-hint")).toHaveText(/^empty: each agent's own \(codex: .+, gemini: .+\)$/);
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

/** A module the worker rewrites in two places: a diff of two hunks, each headed by its function, in TypeScript's colours. */
const MODULE = [
  "// A small module: its diff shows context, hunk headers and syntax colours.",
  'import { readFileSync } from "node:fs";',
  "",
  "export interface Config {",
  "name: string;",
  "retries: number;",
  "}",
  "",
  "export function load(path: string): Config {",
  'const text = readFileSync(path, "utf8");',
  "return JSON.parse(text) as Config;",
  "}",
  ...Array.from({ length: 12 }, (_, i) => `export const step${i} = ${i * 10}; // filler`),
  "",
  "export function greet(config: Config): string {",
  `return \`hello \${config.name}\`;`,
  "}",
  "",
];
const REWRITTEN = MODULE.map((line) =>
  line
    .replace("retries: number;", "retries: number;\ntimeoutMs: number | null; // new")
    .replace(
      `return \`hello \${config.name}\`;`,
      `const who = config.name.trim() || "world";\nreturn \`hello \${who}, \${config.retries} retries\`;`,
    ),
).flatMap((line) => line.split("\n"));

test("a worktree job's diff reads in both themes, unified and split: whole line numbers, hunk headers, syntax colours", async ({
  page,
}, testInfo) => {
  const repo = repository(workdir("diff-themes"), { "src/app.ts": MODULE.join("\n") });
  // The fake worker empties the file, then writes it again a line at a time, as rewritten.
  const prompt = [
    "write src/app.ts",
    ...REWRITTEN.slice(0, -1).map((line) => `append src/app.ts ${line}`),
    "write NOTES.md a new file",
    "hello",
  ].join("\n");
  const launched = await page.request.post("/api/jobs", { headers: auth, data: { agent: "codex", prompt, workdir: repo, worktree: true } });
  expect(launched.ok(), await launched.text()).toBe(true);
  const job = (await launched.json()) as Job;
  await page.goto(`/jobs/${job.id}`);
  const card = page.getByRole("region", { name: "Changes" });
  await expect(card.locator(".d2h-file-wrapper").filter({ hasText: "src/app.ts" })).toBeVisible({ timeout: 20_000 });

  for (const theme of ["light", "dark"] as Theme[]) {
    await setTheme(page, theme);
    for (const layout of ["Unified", "Split"] as const) {
      await card.getByRole("button", { name: layout }).click();
      const file = card.locator(".d2h-file-wrapper").filter({ hasText: "src/app.ts" });
      await expect(file.locator(layout === "Unified" ? ".d2h-file-diff" : ".d2h-file-side-diff").first()).toBeVisible();
      // Two hunks, each headed by the function it is in.
      await expect(file.locator(".d2h-info").filter({ hasText: "@@" })).toHaveCount(2);
      // Every line number is whole, inside its own cell, and clear of the code beside it.
      const clipped = await file.evaluate((el) =>
        [...el.querySelectorAll<HTMLElement>(".line-num1, .line-num2, .d2h-code-side-linenumber")]
          .filter((n) => n.textContent?.trim())
          .flatMap((n) => {
            const cell = n.closest("td");
            const code = cell?.nextElementSibling?.querySelector(".d2h-code-line-ctn");
            const box = n.getBoundingClientRect();
            const range = document.createRange();
            range.selectNodeContents(n);
            const text = range.getBoundingClientRect();
            const clip = cell?.getBoundingClientRect();
            const bad =
              n.scrollWidth > n.clientWidth + 1 ||
              (clip && (text.left < clip.left - 1 || text.right > clip.right + 1)) ||
              (code && text.right > code.getBoundingClientRect().left + 1);
            return bad
              ? [`${n.className} "${n.textContent?.trim()}" ${Math.round(text.left)}-${Math.round(text.right)} in ${box.left}-${box.right}`]
              : [];
          }),
      );
      expect(clipped, `${theme} ${layout}`).toEqual([]);
      // Syntax colours: a keyword and a string are coloured, unlike the plain text around them.
      const colours = await file.evaluate((el) => {
        // Outside a changed word's highlight, where tokens take the line's colour.
        const of = (selector: string) => {
          const found = [...el.querySelectorAll(selector)].find((token) => !token.closest("ins, del"));
          return found ? getComputedStyle(found).color : null;
        };
        return {
          keyword: of(".hljs-keyword"),
          string: of(".hljs-string"),
          text: getComputedStyle(el.querySelector(".d2h-code-line-ctn") ?? el).color,
        };
      });
      expect(colours.keyword, `${theme} ${layout}`).not.toBe(colours.text);
      expect(colours.string, `${theme} ${layout}`).not.toBe(colours.text);
      await card.screenshot({ path: testInfo.outputPath(`diff-${theme}-${layout.toLowerCase()}.png`) });
      await expectAccessible(page, `the job page's diff (${theme}, ${layout})`);
    }
  }
  await snapshot(page, testInfo, "job-diff-dark");
  if (!isPhone(testInfo)) await setTheme(page, "light");
});

test("an agent's worktree default, set on the Agents page, ticks Launch's box; merged, its job's timeline and Files card say so", async ({
  page,
}, testInfo) => {
  const repo = repository(workdir("worktree-default"));
  page.on("dialog", (dialog) => void dialog.accept());
  // agy, which no other spec launches: the desktop and phone runs share one server.
  try {
    await page.getByRole("link", { name: "Agents" }).click();
    const row = page
      .getByRole("table", { name: "Agents" })
      .getByRole("row")
      .filter({ hasText: /^\s*agy\b/ });
    await row.getByRole("button", { name: "Edit agy" }).click();
    const dialog = page.getByRole("dialog");
    const toggle = dialog.getByRole("checkbox", { name: "Each job in a git worktree of its own" });
    await expect(toggle).not.toBeChecked();
    await toggle.check();
    await expect(dialog.getByText("needs a workdir in a git repository; a launch can say otherwise")).toBeVisible();
    await snapshot(page, testInfo, "agent-worktree-default");
    await expectAccessible(page, "an agent's edit dialog");
    await dialog.getByRole("button", { name: "Save" }).click();
    await expect(dialog).toBeHidden();
    await expect(row).toContainText("a worktree per job");

    // Launch follows the agent's default, and says what the workdir must be.
    await page.getByRole("link", { name: "Launch", exact: true }).click();
    await page.getByLabel("Agent").selectOption("agy");
    await expect(page.getByRole("checkbox", { name: /^In a git worktree of its repository/ })).toBeChecked();
    await expect(page.getByText("must be in a git repository: the job gets its own worktree and branch of it", { exact: false })).toBeVisible();
    await page.getByLabel("Prompt").fill("write answer.txt forty-two\nhello");
    await page.getByLabel("Workdir").fill(repo);
    await page.getByRole("button", { name: "Launch", exact: true }).click();
    await page.waitForURL(/\/jobs\/[a-z0-9]+$/);

    const changes = page.getByRole("region", { name: "Changes" });
    const merge = changes.getByRole("button", { name: "Merge into main" });
    await expect(merge).toBeEnabled({ timeout: 20_000 });
    await merge.click();
    await expect(changes.getByText(/was merged into main; its worktree is gone/)).toBeVisible();
    await expect(page.getByRole("list", { name: "Status timeline" }).locator('[data-step="worktree"]')).toContainText("merged into main");
    // Its files were in the worktree's folder, which is gone: named, not linked.
    const files = page.getByRole("region", { name: "Files", exact: true });
    await expect(files.getByRole("note")).toHaveText("The worktree's folder is gone: its change was merged into main.");
    await expect(files.getByText("answer.txt")).toBeVisible();
    await expect(files.getByRole("link")).toHaveCount(0);
    await snapshot(page, testInfo, "worktree-job-merged");
    await expectAccessible(page, "a merged worktree job's page");

    // Launched to several, a worktree and one shared workdir exclude each other: each box is off while the other is ticked.
    await openLaunchForMany(page, ["gemini", "agy"]);
    const shared = page.getByRole("checkbox", { name: /^One shared workdir/ });
    const worktree = page.getByRole("checkbox", { name: /^In a git worktree of its repository/ });
    await expect(worktree).toBeChecked();
    await expect(shared).toBeDisabled();
    await expect(page.getByText("off while the worktree box is ticked", { exact: false })).toBeVisible();
    await expect(page.getByText("each agent's job gets its own worktree and branch of it", { exact: false })).toBeVisible();
    await worktree.uncheck();
    await shared.check();
    await expect(worktree).toBeDisabled();
    await expect(page.getByText("off while the workdir is shared", { exact: false })).toBeVisible();
    await snapshot(page, testInfo, "launch-many-shared-not-worktree");
    await expectAccessible(page, "the Launch page, shared workdir ticked");
  } finally {
    await page.request.patch("/api/agents/agy", { headers: auth, data: { worktree: false } });
  }
});
