import { expect, test } from "@playwright/test";
import { expectAccessible, launchFromForm, setTheme, signIn, snapshot, type Theme, workdir } from "./helpers.js";

/*
 * Every page in both themes, at the project's width: a full-page screenshot for a person to look
 * at (test-results/) and an axe-core scan that fails on any serious or critical issue.
 */
const pages = [
  { name: "jobs", path: "/", ready: "Jobs" },
  { name: "launch", path: "/launch", ready: "Launch a job" },
  { name: "files", path: "/files", ready: "Files" },
  { name: "costs", path: "/costs", ready: "Costs" },
  { name: "ollama", path: "/ollama", ready: "Ollama" },
  { name: "agents", path: "/agents", ready: "Agents" },
  { name: "connect", path: "/connect", ready: "Connect" },
  { name: "api", path: "/reference", ready: "API reference" },
];

for (const theme of ["light", "dark"] as Theme[]) {
  test(`every page in the ${theme} theme: screenshot and accessibility scan`, async ({ page }, testInfo) => {
    await signIn(page);
    await setTheme(page, theme);
    const id = await launchFromForm(page, "gemini", "write tour.md hello\nall good", workdir(`tour-${theme}`));
    await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "succeeded");
    await snapshot(page, testInfo, `${theme}-job`);
    await expectAccessible(page, `the job page (${theme})`);
    for (const { name, path, ready } of pages) {
      await page.goto(path);
      await expect(page.getByRole("heading", { level: 1 }).first()).toContainText(ready);
      await page.waitForLoadState("networkidle");
      await snapshot(page, testInfo, `${theme}-${name}`);
      await expectAccessible(page, `${name} (${theme})`);
    }
    expect(id).toMatch(/^[a-z0-9]+$/);
  });
}
