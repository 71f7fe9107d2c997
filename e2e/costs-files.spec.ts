import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, type Locator, type Page, test } from "@playwright/test";
import { cspViolations, expectAccessible, root, setTheme, signIn, snapshot, type Theme, token, workdir } from "./helpers.js";

/*
 * Issue 14, the Costs and Files pages and how the panel's files are served: one money format,
 * a chart legend of the providers that cost something in a stable colour legible in both themes,
 * Codex jobs without a model priced for the model they used, the Files page's selected size and
 * long names, its workdir picker, images and big files, and compressed, immutable assets.
 */

const auth = { authorization: `Bearer ${token}` };

interface JobBody {
  id: string;
  status: string;
  usage: { model: string | null };
}

/** Launches over REST (setup, not what is under test) and waits for the job to end. */
async function runJob(page: Page, body: Record<string, unknown>): Promise<JobBody> {
  const launched = await page.request.post("/api/jobs", { headers: auth, data: body });
  expect(launched.status(), await launched.text()).toBe(201);
  const { id } = (await launched.json()) as JobBody;
  let job: JobBody = { id, status: "queued", usage: { model: null } };
  await expect
    .poll(
      async () => {
        job = (await (await page.request.get(`/api/jobs/${id}`, { headers: auth })).json()) as JobBody;
        return job.status;
      },
      { timeout: 20_000 },
    )
    .toMatch(/succeeded|failed/);
  return job;
}

type Rgb = [number, number, number];

function parseColour(css: string): { rgb: Rgb; alpha: number } {
  const n = css.match(/[\d.]+/g)?.map(Number) ?? [0, 0, 0];
  return { rgb: [n[0] ?? 0, n[1] ?? 0, n[2] ?? 0], alpha: n[3] ?? 1 };
}

function luminance([r, g, b]: Rgb): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

function contrast(a: Rgb, b: Rgb): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** The element's text (or, for SVG, fill) colour and the first opaque background behind it. */
async function colours(el: Locator, fill = false): Promise<{ fg: Rgb; bg: Rgb }> {
  const [fg, bg] = await el.evaluate((node, useFill) => {
    const fgCss = useFill ? getComputedStyle(node).fill : getComputedStyle(node).color;
    let at: Element | null = node;
    while (at) {
      const bgCss = getComputedStyle(at).backgroundColor;
      if (bgCss && !/rgba\(.*,\s*0\)$/.test(bgCss) && bgCss !== "transparent") return [fgCss, bgCss];
      at = at.parentElement;
    }
    return [fgCss, getComputedStyle(document.body).backgroundColor];
  }, fill);
  return { fg: parseColour(fg).rgb, bg: parseColour(bg).rgb };
}

/** The one money rule (packages/shared formatUsd): `$0`, `<$0.0001`, cents from $1, two significant digits below. */
const MONEY = /^-?(\$0|<\$0\.0001|\$[1-9]\d*\.\d{2}|\$0\.0*[1-9]\d)$/;

async function moneyOnPage(page: Page): Promise<string[]> {
  const texts = await page.locator("main").evaluate((main) => {
    const out: string[] = [];
    const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) out.push(n.textContent ?? "");
    for (const el of main.querySelectorAll("[aria-label], title")) out.push(el.getAttribute("aria-label") ?? el.textContent ?? "");
    return out;
  });
  return texts.flatMap((t) => t.match(/<?-?\$[\d.,]+/g) ?? []).map((m) => m.replace(/[.,]$/, ""));
}

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("costs: one money format, a legend of providers with cost in stable colours, legible in both themes", async ({ page }, testInfo) => {
  await runJob(page, { agent: "gemini", prompt: "write a.txt hi", workdir: workdir("costs-gemini") });
  await runJob(page, { agent: "claude", prompt: "write a.txt hi", workdir: workdir("costs-claude") });
  await runJob(page, { agent: "kiro", prompt: "hello", workdir: workdir("costs-kiro") });
  // OpenCode's default (free) model reports $0 for the tokens it used: it has no price, so it is unpriced everywhere.
  const opencode = await runJob(page, { agent: "opencode", prompt: "write a.txt hi", workdir: workdir("costs-opencode") });

  const swatches: Record<string, string> = {};
  for (const theme of ["light", "dark"] as Theme[]) {
    await page.goto("/costs");
    await setTheme(page, theme);
    const chart = page.getByRole("img", { name: /Bar chart of cost per provider per day/ });
    await expect(chart).toBeVisible();
    await expect(chart).toHaveAttribute("aria-label", /anthropic \$.*google \$/);
    const legend = page.getByRole("list", { name: "Providers" });
    // Only providers that cost something: kiro's (aws) reported no usage, so it is not there.
    const byProvider = page.getByRole("region", { name: "By provider" });
    await expect(byProvider).toContainText("aws");
    const costly = await byProvider
      .locator("tbody tr")
      .evaluateAll((rows) =>
        rows.filter((r) => /^\$(?!0$)/.test(r.lastElementChild?.textContent?.trim() ?? "")).map((r) => r.firstElementChild?.textContent?.trim()),
      );
    expect(costly).toEqual(expect.arrayContaining(["anthropic", "google"]));
    expect(costly).not.toContain("aws");
    await expect(legend.locator(".mono")).toHaveText(costly as string[]);

    // Every amount on the page (headline, tables, chart axis, legend, titles) follows one rule.
    const money = await moneyOnPage(page);
    expect(money.length).toBeGreaterThan(5);
    expect(money.filter((m) => !MONEY.test(m))).toEqual([]);
    // The headline and the provider table show the same total the same way.
    const total = (await page.getByTestId("total-cost").textContent()) ?? "";
    expect(total).toMatch(MONEY);

    // Each bar carries a tooltip naming the day, the providers and their costs.
    const tooltip = await chart.locator("title").filter({ hasText: "anthropic" }).first().textContent();
    expect(tooltip).toMatch(/^\d{4}-\d{2}-\d{2}: \$.*\nanthropic \$/s);

    // Legible: legend text ≥ 4.5:1, the swatches and axis labels ≥ 3:1 against the card.
    for (const item of await legend.getByRole("listitem").all()) {
      const text = await colours(item.locator(".mono"));
      expect(contrast(text.fg, text.bg), `legend text (${theme})`).toBeGreaterThanOrEqual(4.5);
      const swatch = item.locator(".swatch");
      const name = (await item.locator(".mono").textContent()) ?? "";
      const fill = await swatch.evaluate((n) => getComputedStyle(n).backgroundColor);
      const card = await colours(item);
      expect(contrast(parseColour(fill).rgb, card.bg), `${name} swatch (${theme})`).toBeGreaterThanOrEqual(3);
      swatches[`${theme}:${name}`] = fill;
    }
    const axis = await colours(chart.locator("text").first(), true);
    expect(contrast(axis.fg, axis.bg), `axis labels (${theme})`).toBeGreaterThanOrEqual(4.5);
    // Distinct colours for distinct providers.
    expect(swatches[`${theme}:anthropic`]).not.toBe(swatches[`${theme}:google`]);
    await snapshot(page, testInfo, `costs-${theme}`);
    await expectAccessible(page, `costs (${theme})`);
  }

  // The same provider keeps its colour on the next visit, and the chart's bars use it.
  await page.reload();
  await setTheme(page, "light");
  const again = await page
    .getByRole("list", { name: "Providers" })
    .getByRole("listitem")
    .filter({ hasText: "google" })
    .locator(".swatch")
    .evaluate((n) => getComputedStyle(n).backgroundColor);
  expect(again).toBe(swatches["light:google"]);
  const barFills = await page
    .getByRole("img", { name: /Bar chart/ })
    .locator("rect[style]")
    .evaluateAll((rects) => rects.map((r) => getComputedStyle(r).fill));
  expect(barFills).toContain(swatches["light:google"]);

  // One set of words: the Readable step lines, the Usage card and the jobs list all say "unpriced", never "$0".
  await page.goto(`/jobs/${opencode.id}`);
  const output = page.getByRole("log", { name: "Job output" });
  await expect(output).toContainText(/· step done · [\d,]+ in \/ [\d,]+ out · unpriced/);
  await expect(output).not.toContainText("$0");
  const usage = page.getByRole("region", { name: "Usage and cost" });
  await expect(usage.locator("dt", { hasText: "Cost" }).locator("+ dd")).toContainText("unpriced");
  await page.goto("/jobs");
  await expect(page.locator(`tr:has(a[href="/jobs/${opencode.id}"])`).locator('[data-label="Cost"]')).toHaveText("unpriced");

  // A period in which nothing ran says so, not "unpriced".
  await page.goto("/costs");
  await page.getByLabel("From", { exact: true }).fill("2020-01-01");
  await page.getByLabel("To", { exact: true }).fill("2020-01-02");
  await expect(page.getByTestId("total-cost")).toHaveText("nothing ran");
  await snapshot(page, testInfo, "costs-empty-period");
});

test("budgets: a provider Corral knows, changed in place; prices you set listed and reset", async ({ page }, testInfo) => {
  // The other width's run may have left its budget: start from none for google per month.
  const list = (await (await page.request.get("/api/costs/budgets", { headers: auth })).json()) as {
    budgets: { id: number; provider: string; period: string }[];
  };
  for (const b of list.budgets.filter((x) => x.provider === "google" && x.period === "month")) {
    await page.request.delete(`/api/costs/budgets/${b.id}`, { headers: auth });
  }
  await page.goto("/costs");
  const add = page.getByRole("form", { name: "Add a budget" });
  // A select of the known providers, not a box a typo like "antropic" gets into.
  const provider = add.getByLabel("Provider");
  await expect(provider.locator("option", { hasText: "anthropic" })).toHaveCount(1);
  await expect(provider.locator("option", { hasText: "antropic" })).toHaveCount(0);
  await provider.selectOption("google");
  await add.getByLabel("Period").selectOption("month");
  await add.getByLabel("Max USD").fill("1000");
  await add.getByRole("button", { name: "Add budget" }).click();
  const budgets = page.getByRole("region", { name: "Budgets" });
  const google = budgets.getByRole("listitem").filter({ hasText: "google" }).filter({ hasText: "per month" });
  await expect(google).toContainText("of $1000.00");
  // Raised in place.
  await google.getByRole("button", { name: "Change the monthly budget of google" }).click();
  const change = google.getByRole("form", { name: "New limits for the monthly budget of google" });
  await change.getByLabel("Max USD").fill("2500");
  await change.getByRole("button", { name: "Save" }).click();
  await expect(google).toContainText("of $2500.00");
  await expect(change).toHaveCount(0);

  // A price you set is listed with its cached-input price, and Reset removes it.
  await page.request.delete("/api/costs/prices?provider=openai&model=gpt-e2e-reset", { headers: auth });
  await page.getByRole("button", { name: "Set a price" }).click();
  const form = page.getByRole("form", { name: "Set a price" });
  await form.getByLabel("Provider").fill("openai");
  await form.getByLabel("Model").fill("gpt-e2e-reset");
  await form.getByLabel("USD / M input").fill("2");
  await form.getByLabel("USD / M output").fill("8");
  await form.getByLabel("USD / M cached input").fill("0.50");
  await form.getByRole("button", { name: "Save price" }).click();
  await expect(form.getByRole("status")).toContainText("Saved");
  const prices = page.getByRole("region", { name: "Prices you set" });
  const row = prices.getByRole("row").filter({ hasText: "openai / gpt-e2e-reset" });
  await expect(row).toContainText("$2.00");
  await expect(row).toContainText("$0.50");
  await snapshot(page, testInfo, "costs-budgets-prices");
  await expectAccessible(page, "costs budgets and prices");
  await row.getByRole("button", { name: "Reset the price of openai / gpt-e2e-reset" }).click();
  await expect(row).toHaveCount(0);
  await google.getByRole("button", { name: "Delete the monthly budget of google" }).click();
  await expect(google).toHaveCount(0);
});

test("a Codex job run without a model is priced for the model it used; an unreported model is said in words", async ({ page }, testInfo) => {
  // Start from no price for gpt-5.5 (the other width's run may have set one).
  await page.request.delete("/api/costs/prices?provider=openai&model=gpt-5.5", { headers: auth });
  const job = await runJob(page, { agent: "codex", prompt: "write a.txt hi", workdir: workdir("codex-model") });
  expect(job.usage.model).toBe("gpt-5.5");

  await page.goto("/costs");
  const unpriced = page.getByRole("region", { name: "Unpriced models" });
  await unpriced.getByRole("button", { name: "Set price for openai / gpt-5.5" }).click();
  const form = page.getByRole("form", { name: "Set a price" });
  await expect(form.getByLabel("Provider")).toHaveValue("openai");
  await expect(form.getByLabel("Model")).toHaveValue("gpt-5.5");
  await expect(form.getByLabel("USD / M input")).toBeFocused();
  // Saving with prices left out says what to do, in words.
  await form.getByRole("button", { name: "Save price" }).click();
  await expect(form.locator("#price-input-error")).toContainText("USD per million input tokens");
  await expect(form).not.toContainText(/expected|too small|invalid/i);
  await form.getByLabel("USD / M input").fill("2");
  await expect(form.locator("#price-input-error")).toHaveCount(0);
  await form.getByLabel("USD / M output").fill("8");
  await form.getByRole("button", { name: "Save price" }).click();
  await expect(form.getByRole("status")).toContainText("Saved");
  await expect(page.getByRole("list", { name: "Providers" })).toContainText("openai");
  await expect(page.getByRole("region", { name: "By model" })).not.toContainText(/openai \/ gpt-5\.5\s*1.*unpriced/);
  await snapshot(page, testInfo, "costs-codex-priced");

  // A Codex that leaves no session record (its home is not writable): the model is truly unknown.
  const codexHome = path.join(root, ".codex");
  rmSync(codexHome, { recursive: true, force: true });
  writeFileSync(codexHome, "");
  try {
    const blind = await runJob(page, { agent: "codex", prompt: "hello", workdir: workdir("codex-unknown") });
    expect(blind.usage.model).toBeNull();
  } finally {
    rmSync(codexHome, { force: true });
  }
  await page.reload();
  await page.getByRole("button", { name: "Set price for openai / model not reported" }).click();
  const unknown = page.getByRole("form", { name: "Set a price" });
  await expect(unknown.getByRole("note")).toContainText("did not report which model these openai jobs used");
  await expect(unknown.getByLabel("Model")).toHaveValue("");
  await expect(unknown.getByLabel("Model")).toBeFocused();
  await unknown.getByLabel("USD / M input").fill("1");
  await unknown.getByLabel("USD / M output").fill("1");
  await unknown.getByRole("button", { name: "Save price" }).click();
  await expect(unknown.locator("#price-model-error")).toContainText("Type the model's name");
  await expect(unknown).not.toContainText(/expected|too small|>=|invalid/i);
  await snapshot(page, testInfo, "costs-unknown-model");
});

/** A PNG drawn by the browser: a gradient with a border, so scaling shows. */
async function writePng(page: Page, file: string, width: number, height: number): Promise<void> {
  const url = await page.evaluate(
    ([w, h]) => {
      const canvas = document.createElement("canvas");
      canvas.width = w as number;
      canvas.height = h as number;
      const g = canvas.getContext("2d") as CanvasRenderingContext2D;
      const fill = g.createLinearGradient(0, 0, w as number, h as number);
      fill.addColorStop(0, "#2457c5");
      fill.addColorStop(1, "#f2a900");
      g.fillStyle = fill;
      g.fillRect(0, 0, w as number, h as number);
      g.strokeStyle = "#000";
      g.strokeRect(0.5, 0.5, (w as number) - 1, (h as number) - 1);
      return canvas.toDataURL("image/png");
    },
    [width, height],
  );
  writeFileSync(file, Buffer.from(url.split(",")[1] ?? "", "base64"));
}

test("files: the workdir used last, found by typing; images at their size; a big file read to its end", async ({ page }, testInfo) => {
  // Both themes, then a phone's width, on two shared cores.
  test.setTimeout(120_000);
  const longName = "a-quite-long-report-name-that-a-worker-might-write-for-the-quarterly-results-2026.md";
  const dir = workdir("files-long");
  // Alphabetically before the one used last: the page must not open on it.
  const other = workdir("files-earlier");
  // A preview is rendered HTML (highlighting, Markdown): it too lives within the panel's CSP.
  const violations = await cspViolations(page);
  await runJob(page, { agent: "gemini", prompt: "write notes.txt hi", workdir: other });
  await runJob(page, { agent: "gemini", prompt: `write ${longName} hello\nwrite short.txt hi`, workdir: dir });
  await writePng(page, path.join(dir, "icon.png"), 64, 64);
  await writePng(page, path.join(dir, "banner.png"), 2400, 60);
  // 1.3 MB of lines with two- and three-byte characters: parts of 512 KB end inside some of them.
  const lines = Array.from({ length: 14_000 }, (_, i) => `line ${String(i + 1).padStart(5, "0")} · ünïcödé € ${"x".repeat(70)}`);
  writeFileSync(path.join(dir, "big.log"), `${lines.join("\n")}\nthe end`);

  // Opened from the menu, Files shows the workdir a job used last, not the alphabetically first, and the URL says which.
  await page.goto("/files");
  const picker = page.getByRole("combobox", { name: "Workdir" });
  await expect(picker).toHaveValue(dir);
  await expect(page).toHaveURL(new RegExp(`workdir=${encodeURIComponent(dir)}`));
  // Found by typing part of its path; the arrows and Enter open it.
  await picker.click();
  await picker.pressSequentially("files-earl");
  const options = page.getByRole("listbox", { name: "Workdirs" }).getByRole("option");
  await expect(options).toHaveCount(1);
  await expect(options).toContainText(other);
  await picker.press("ArrowDown");
  await picker.press("Enter");
  await expect(page).toHaveURL(new RegExp(`workdir=${encodeURIComponent(other)}`));
  await expect(page.getByRole("navigation", { name: "Workdir tree" })).toContainText(other);
  // Back to the first: the picker's choice is a step in the history.
  await page.goBack();
  await expect(picker).toHaveValue(dir);

  for (const theme of ["light", "dark"] as Theme[]) {
    await page.goto(`/files?workdir=${encodeURIComponent(dir)}&path=${encodeURIComponent(path.join(dir, longName))}`);
    await setTheme(page, theme);
    const tree = page.getByRole("navigation", { name: "Workdir tree" });
    const selected = tree.locator('button[aria-current="true"]');
    await expect(selected).toContainText("a-quite-long");
    const size = await colours(selected.locator(".size"));
    expect(contrast(size.fg, size.bg), `selected size (${theme})`).toBeGreaterThanOrEqual(4.5);
    await expect(selected.locator(".truncate")).toHaveAttribute("title", longName);

    const viewer = page.getByRole("region", { name: `File ${longName}` });
    await expect(viewer).toContainText("hello");
    const name = viewer.locator("strong").first();
    await expect(name).toHaveText(longName);
    await expect(name).toHaveAttribute("title", path.join(dir, longName));
    // Not cut: the whole name is laid out inside the card.
    const fits = await name.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const card = (el.closest(".card") as HTMLElement).getBoundingClientRect();
      return el.scrollWidth <= el.clientWidth + 1 && box.right <= card.right + 1 && box.left >= card.left - 1;
    });
    expect(fits, `the preview header shows the whole name (${theme})`).toBe(true);
    // Nothing pushes the page sideways (a long workdir path in the picker did on a phone).
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await snapshot(page, testInfo, `files-long-name-${theme}`);
    await expectAccessible(page, `files (${theme})`);

    // The picker open over the page, its matches for what was typed.
    await page.getByRole("combobox", { name: "Workdir" }).click();
    await page.getByRole("combobox", { name: "Workdir" }).pressSequentially("files");
    await expect(page.getByRole("listbox", { name: "Workdirs" })).toBeVisible();
    await snapshot(page, testInfo, `files-picker-${theme}`);
    await expectAccessible(page, `the workdir picker (${theme})`);
    await page.keyboard.press("Escape");

    // A 64×64 icon at 64×64 (it was stretched to the card's width), its size in pixels said.
    await tree.getByRole("button", { name: "icon.png" }).click();
    const icon = page.getByRole("region", { name: "File icon.png" });
    await expect(icon.getByRole("img", { name: "icon.png" })).toHaveJSProperty("naturalWidth", 64);
    const iconBox = await icon.getByRole("img", { name: "icon.png" }).boundingBox();
    expect([Math.round(iconBox?.width ?? 0), Math.round(iconBox?.height ?? 0)], "drawn at its own size, plus its 1px border").toEqual([66, 66]);
    await expect(icon).toContainText("64 × 64 px");
    await expect(icon).not.toContainText("to fit");
    await snapshot(page, testInfo, `files-image-${theme}`);
    // A wider one is made smaller to fit the card, keeping its proportions, and says so.
    await tree.getByRole("button", { name: "banner.png" }).click();
    const banner = page.getByRole("region", { name: "File banner.png" });
    await expect(banner).toContainText(/2400 × 60 px · shown at \d+% to fit/);
    const bannerBox = await banner.getByRole("img").boundingBox();
    const cardBox = await banner.boundingBox();
    expect((bannerBox?.x ?? 0) + (bannerBox?.width ?? 0)).toBeLessThanOrEqual((cardBox?.x ?? 0) + (cardBox?.width ?? 0));
    // Inside its border, as wide for its height as the picture is.
    const drawn = await banner.getByRole("img").evaluate((img) => ({ width: img.clientWidth, height: img.clientHeight }));
    expect(Math.abs(drawn.width / drawn.height - 2400 / 60), `${drawn.width} × ${drawn.height}`).toBeLessThan(1);
    await snapshot(page, testInfo, `files-image-scaled-${theme}`);
  }

  // A big file: its first 512 KB, then the next on asking, to its last line, no character split between parts.
  await page.getByRole("navigation", { name: "Workdir tree" }).getByRole("button", { name: "big.log" }).click();
  const big = page.getByRole("region", { name: "File big.log" });
  await expect(big.getByRole("status")).toHaveText(/^Showing the first 512\.0 KB of 1\.\d MB\.$/);
  await expect(big.locator("pre")).not.toContainText("the end");
  await big.getByRole("button", { name: "Show the next 512.0 KB" }).click();
  await expect(big.getByRole("status")).toHaveText(/^Showing the first 1\.0 MB of 1\.\d MB\.$/);
  await snapshot(page, testInfo, "files-big-file");
  await big.getByRole("button", { name: /^Show the rest \(\d+\.\d KB\)$/ }).click();
  await expect(big.locator("pre")).toContainText("line 14000");
  await expect(big.getByRole("status")).toHaveCount(0);
  await expect(big.getByRole("button", { name: /^Show/ })).toHaveCount(0);
  const shown = (await big.locator("pre").textContent()) ?? "";
  expect(shown).toBe(`${lines.join("\n")}\nthe end`);

  // At a phone's width (the phone run skips this file): nothing pushes the page sideways, the icon keeps its size.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const theme of ["dark", "light"] as Theme[]) {
    await setTheme(page, theme);
    await page.getByRole("navigation", { name: "Workdir tree" }).getByRole("button", { name: "big.log" }).click();
    await expect(big.locator("pre")).toContainText("the end");
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await snapshot(page, testInfo, `files-big-file-narrow-${theme}`);
    await page.getByRole("navigation", { name: "Workdir tree" }).getByRole("button", { name: "icon.png" }).click();
    await expect(page.getByRole("region", { name: "File icon.png" })).toContainText("64 × 64 px");
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await snapshot(page, testInfo, `files-image-narrow-${theme}`);
  }
  expect(violations).toEqual([]);
});

test("assets: hashed files come compressed and cached for good, the page revalidates", async ({ page }) => {
  const assets: { url: string; headers: Record<string, string> }[] = [];
  page.on("response", (res) => {
    if (res.url().includes("/assets/")) assets.push({ url: res.url(), headers: res.headers() });
  });
  const doc = await page.goto("/costs");
  expect(doc?.headers()["cache-control"]).toBe("no-cache");
  expect(doc?.headers().etag).toBeTruthy();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Costs");
  await page.waitForLoadState("networkidle");
  const scripts = assets.filter((a) => a.url.endsWith(".js"));
  expect(scripts.length).toBeGreaterThan(0);
  for (const a of assets) {
    expect(a.headers["cache-control"], a.url).toBe("public, max-age=31536000, immutable");
    expect(["br", "gzip"], a.url).toContain(a.headers["content-encoding"]);
  }
  // The Costs page's own code is small now that its chart is plain SVG (recharts was 445 kB).
  const costsChunk = await page.evaluate(() =>
    performance
      .getEntriesByType("resource")
      .filter((r) => r.name.includes("/assets/costs-page-"))
      .map((r) => (r as PerformanceResourceTiming).decodedBodySize),
  );
  expect(costsChunk).toHaveLength(1);
  expect(costsChunk[0]).toBeLessThan(60_000);
});
