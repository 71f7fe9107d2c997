import path from "node:path";
import type { Page, TestInfo } from "@playwright/test";

export const token = process.env.CORRAL_E2E_TOKEN ?? "";
export const root = process.env.CORRAL_E2E_ROOT ?? "";
/** A fresh workdir under the allowed root. */
export const workdir = (name: string) => path.join(root, "work", name);

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
