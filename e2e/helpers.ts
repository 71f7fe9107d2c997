import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, type TestInfo, test } from "@playwright/test";

export const token = process.env.CORRAL_E2E_TOKEN ?? "";
export const root = process.env.CORRAL_E2E_ROOT ?? "";

/**
 * A fresh workdir under the allowed root, one per project: the desktop and phone runs share
 * one server, and a workdir busy with the other run's job would refuse the launch.
 */
export const workdir = (name: string) => path.join(root, "work", test.info().project.name, name);

/** True in the phone-width project. */
export const isPhone = (testInfo: TestInfo) => testInfo.project.name === "phone";

/** Opens the panel the way a person does: the printed URL with ?token=, traded for a cookie. */
export async function signIn(page: Page): Promise<void> {
  await page.goto(`/?token=${token}`);
  await page.waitForURL((url) => !url.search.includes("token="));
}

/** Saves a full-page screenshot as a test artifact under test-results/. */
export async function snapshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const file = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
}

export type Theme = "light" | "dark";

/** Switches the panel's theme the way a person does, with the sidebar's selector. */
export async function setTheme(page: Page, theme: Theme): Promise<void> {
  await page.getByLabel("Colour theme").selectOption(theme);
  await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
}

/**
 * An axe-core scan of the page as it is now: no serious or critical violation (WCAG 2.x A and AA
 * rules). The failure lists each rule with the elements it flagged, so it says what to fix.
 */
export async function expectAccessible(page: Page, where: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  const report = bad.map((v) => `${v.id} (${v.impact}): ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(" ")}`).join("\n")}`);
  // Soft: a tour goes on to the next page, so one run lists every page's violations.
  expect.soft(report, `accessibility violations on ${where}`).toEqual([]);
}

/** Launches a job through the form and returns its id once its page is open. */
export async function launchFromForm(page: Page, agent: string, prompt: string, dir: string): Promise<string> {
  await page.getByRole("link", { name: "Launch", exact: true }).click();
  await page.getByLabel("Agent").selectOption(agent);
  await page.getByLabel("Prompt").fill(prompt);
  await page.getByLabel("Workdir").fill(dir);
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await page.waitForURL(/\/jobs\/[a-z0-9]+$/);
  return page.url().split("/").pop() as string;
}

/**
 * Contrast of text too short for axe to rule on (a one-digit badge, "—"): axe leaves it
 * "incomplete" with the ratio it measured, so expectAccessible never fails on it; this does.
 */
export async function expectLegibleShortText(page: Page, where: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withRules(["color-contrast"]).analyze();
  const low = results.incomplete
    .flatMap((rule) => rule.nodes)
    .flatMap((node) =>
      node.any.flatMap((check) => {
        const data = check.data as { messageKey?: string; contrastRatio?: number; expectedContrastRatio?: string } | null;
        const expected = Number.parseFloat(data?.expectedContrastRatio ?? "4.5");
        return data?.messageKey === "shortTextContent" && (data.contrastRatio ?? 0) < expected
          ? [`${node.target.join(" ")}: ${data.contrastRatio} < ${expected}`]
          : [];
      }),
    );
  expect.soft(low, `short text below its contrast on ${where}`).toEqual([]);
}

/**
 * Every Content-Security-Policy violation the page reports from now on (Chromium's console
 * message and the document's `securitypolicyviolation` event), for a test to expect none.
 */
export async function cspViolations(page: Page): Promise<string[]> {
  const seen: string[] = [];
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      console.error(`securitypolicyviolation: ${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  page.on("console", (message) => {
    const text = message.text();
    if (/securitypolicyviolation|Content Security Policy/i.test(text)) seen.push(text);
  });
  return seen;
}
