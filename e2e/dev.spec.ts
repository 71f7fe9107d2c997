import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test, type Page } from "@playwright/test";
import { cspViolations, snapshot } from "./helpers.js";

/**
 * `pnpm dev` as a newcomer runs it: the printed URL at 127.0.0.1 and at localhost shows the
 * panel, live; hot reload connects and applies an edit; an MCP-style client with the token keeps
 * working all along (hot reload's socket must never count as a wrong token).
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const component = path.join(repo, "apps/web/src/pages/connect-page.tsx");
const HEADING = "Connect an MCP client";
const port = Number(process.env.CORRAL_E2E_PORT) + 1;
const token = "dev-e2e-token-0123456789";

let dev: ChildProcess | null = null;
let root = "";
let output = "";

test.beforeAll(async () => {
  test.setTimeout(120_000);
  root = mkdtempSync(path.join(os.tmpdir(), "corral-dev-e2e-"));
  dev = spawn("pnpm", ["dev"], {
    cwd: repo,
    detached: true, // its own process group: tsx watch and the server stop together
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, HOME: root, CORRAL_DATA_DIR: path.join(root, "data"), CORRAL_PORT: String(port), CORRAL_TOKEN: token },
  });
  for (const stream of [dev.stdout, dev.stderr]) stream?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await expect.poll(() => output, { timeout: 90_000, message: "pnpm dev prints its URL" }).toContain(`http://127.0.0.1:${port}/?token=`);
});

test.afterAll(() => {
  if (dev?.pid) process.kill(-dev.pid, "SIGTERM");
  rmSync(root, { recursive: true, force: true });
});

/** What an MCP client or script with the token sees, at any moment. */
const withToken = () => fetch(`http://127.0.0.1:${port}/api/jobs`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

async function openPrinted(page: Page, host: string): Promise<string[]> {
  const console: string[] = [];
  page.on("console", (message) => console.push(message.text()));
  // Vite's inline preamble and injected styles get pnpm dev's relaxed policy; nothing else is refused.
  const violations = await cspViolations(page);
  await page.goto(`http://${host}:${port}/?token=${token}`);
  await page.waitForURL((url) => !url.search.includes("token="));
  await expect(page.getByRole("heading", { name: "Jobs", exact: true })).toBeVisible();
  await expect(page.getByText("live", { exact: true })).toBeVisible();
  await expect.poll(() => console.some((line) => line.includes("[vite] connected"))).toBe(true);
  expect(violations).toEqual([]);
  return console;
}

test("the printed URL at 127.0.0.1 and at localhost shows the live panel, with hot reload", async ({ page, browser }, testInfo) => {
  test.setTimeout(120_000);
  await openPrinted(page, "127.0.0.1");
  expect(await withToken()).toBe(200);
  await snapshot(page, testInfo, "dev-127.0.0.1");

  const other = await browser.newPage();
  await openPrinted(other, "localhost");
  await snapshot(other, testInfo, "dev-localhost");
  await other.close();

  // Edit a component: the open page shows the change without reloading.
  await page.getByRole("link", { name: "Connect", exact: true }).click();
  await expect(page.getByRole("heading", { name: HEADING })).toBeVisible();
  await page.evaluate(() => ((window as { sameDocument?: boolean }).sameDocument = true));
  const original = readFileSync(component, "utf8");
  try {
    writeFileSync(component, original.replace(`<h1>${HEADING}</h1>`, `<h1>${HEADING} (edited)</h1>`));
    await expect(page.getByRole("heading", { name: `${HEADING} (edited)` })).toBeVisible();
    expect(await page.evaluate(() => (window as { sameDocument?: boolean }).sameDocument)).toBe(true);
  } finally {
    writeFileSync(component, original);
  }
  // The edit above showed hot reload at work. On a loaded machine the file watcher can miss the
  // second of two quick writes, so the restored file is touched again until the page shows it.
  await expect(async () => {
    utimesSync(component, new Date(), new Date());
    await expect(page.getByRole("heading", { name: HEADING, exact: true })).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: 30_000 });

  // Some time later, with hot reload connected all along, nobody has been locked out.
  await page.waitForTimeout(5_000);
  expect(await withToken()).toBe(200);
  await page.reload();
  await expect(page.getByRole("heading", { name: HEADING, exact: true })).toBeVisible();
  expect(output).not.toMatch(/too many wrong tokens/);
});
