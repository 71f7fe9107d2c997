import { mkdtempSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { defineConfig } from "@playwright/test";

// The config is loaded by the runner and again by each worker; the runner picks the temp root,
// port and token once and the workers inherit them through the environment.
process.env.CORRAL_E2E_ROOT ??= realpathSync(mkdtempSync(path.join(os.tmpdir(), "corral-e2e-")));
process.env.CORRAL_E2E_PORT ??= String(17_400 + Math.floor(Math.random() * 500));
process.env.CORRAL_E2E_TOKEN ??= "e2e-token-0123456789abcdef";
const baseURL = `http://127.0.0.1:${process.env.CORRAL_E2E_PORT}`;

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: "list",
  use: {
    baseURL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      // Debian's Chromium (apt install chromium); Playwright's own browser download is never used.
      executablePath: process.env.CORRAL_E2E_CHROMIUM ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    },
  },
  // At the widths of the user trial that shaped the panel: a laptop, and a phone. Every spec runs
  // on the laptop; on the phone, those of what changes with the width — the layout of every page,
  // the forms, the job page and its launch, Compare's columns — and not flows whose screens the
  // layout specs already cover there (output paging, costs, records, threads, the dev server),
  // which would cost CI minutes twice for the same assertions.
  projects: [
    { name: "desktop", use: { browserName: "chromium", viewport: { width: 1400, height: 900 } } },
    {
      name: "phone",
      testMatch: /\/(layout|pages|forms|jobs|job-page|compare|conversations)\.spec\.ts$/,
      use: { browserName: "chromium", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
    },
  ],
  webServer: {
    command: "npx tsx e2e/serve.ts",
    url: `${baseURL}/api/health`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
  },
});
