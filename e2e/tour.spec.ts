import { expect, test } from "@playwright/test";
import {
  cspViolations,
  expectAccessible,
  expectLegibleShortText,
  launchFromForm,
  setTheme,
  signIn,
  snapshot,
  type Theme,
  token,
  workdir,
} from "./helpers.js";

/*
 * Every page in both themes, at the project's width: a full-page screenshot for a person to look
 * at (test-results/) and an axe-core scan that fails on any serious or critical issue. The pages
 * are seen as in daily use: a job running (the nav's badge, a Running-now card), one finished,
 * a model probed, a dialog open.
 */
const pages = [
  { name: "jobs", path: "/", ready: "Jobs" },
  { name: "launch", path: "/launch", ready: "Launch a job" },
  { name: "conversations", path: "/conversations", ready: "Conversations" },
  { name: "files", path: "/files", ready: "Files" },
  { name: "costs", path: "/costs", ready: "Costs" },
  { name: "ollama", path: "/ollama", ready: "Ollama" },
  { name: "agents", path: "/agents", ready: "Agents" },
  { name: "runners", path: "/runners", ready: "Runners" },
  { name: "connect", path: "/connect", ready: "Connect" },
  { name: "api", path: "/reference", ready: "API reference" },
];

const auth = { authorization: `Bearer ${token}` };

for (const theme of ["light", "dark"] as Theme[]) {
  test(`every page in the ${theme} theme: screenshot and accessibility scan`, async ({ page, request }, testInfo) => {
    // Eleven scans on two shared cores.
    test.setTimeout(240_000);
    const probe = await request.post("/api/ollama/probe", { headers: auth, data: { model: "qwen2.5:7b" } });
    expect(probe.ok(), await probe.text()).toBe(true);
    const started = await request.post("/api/jobs", {
      headers: auth,
      data: { agent: "kiro", prompt: "print 3\nhang", workdir: workdir(`tour-${theme}-running`) },
    });
    const running = ((await started.json()) as { id: string }).id;
    const violations = await cspViolations(page);
    try {
      await signIn(page);
      await setTheme(page, theme);
      const id = await launchFromForm(page, "gemini", "write tour.md hello\nall good", workdir(`tour-${theme}`));
      await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "succeeded");
      await snapshot(page, testInfo, `${theme}-job`);
      await expectAccessible(page, `the job page (${theme})`);
      await expectLegibleShortText(page, `the job page (${theme})`);

      await page.goto(`/jobs/${running}`);
      await expect(page.getByRole("log", { name: "Job output" })).toContainText("line 3");
      await snapshot(page, testInfo, `${theme}-job-running`);
      await expectAccessible(page, `a running job's page (${theme})`);
      await expectLegibleShortText(page, `a running job's page (${theme})`);

      for (const { name, path, ready } of pages) {
        await page.goto(path);
        await expect(page.getByRole("heading", { level: 1 }).first()).toContainText(ready);
        await page.waitForLoadState("networkidle");
        await snapshot(page, testInfo, `${theme}-${name}`);
        await expectAccessible(page, `${name} (${theme})`);
        await expectLegibleShortText(page, `${name} (${theme})`);
      }

      await page.goto("/agents");
      await page.getByRole("button", { name: "Add a command agent" }).click();
      await expect(page.getByRole("dialog")).toBeVisible();
      // The window as seen: a full-page capture would show the page past the modal's backdrop.
      await page.screenshot({ path: testInfo.outputPath(`${theme}-agents-dialog.png`) });
      await expectAccessible(page, `the add-agent dialog (${theme})`);
      await expectLegibleShortText(page, `the add-agent dialog (${theme})`);
      expect(id).toMatch(/^[a-z0-9]+$/);
      // The panel lives within its Content-Security-Policy: nothing it needs is refused.
      expect(violations).toEqual([]);
    } finally {
      await request.post(`/api/jobs/${running}/cancel`, { headers: auth });
    }
  });
}
