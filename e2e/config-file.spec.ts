import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { expectAccessible, root, signIn, snapshot, token } from "./helpers.js";

/** The e2e server's default config file: `corral.yaml` in its data dir. */
const configFile = path.join(root, "data", "corral.yaml");
const auth = { authorization: `Bearer ${token}` };

const GOOD = "agents:\n  from_file:\n    provider: gemini\n    description: Declared in corral.yaml\n";
const BAD = "agents:\n  from_file:\n    provider: gemini\n    colour: red\nservers:\n  - host: build.example.com\n";

test.afterEach(async ({ request }) => {
  rmSync(configFile, { force: true });
  // Without the file its agent goes; other specs see the panel as they expect it.
  await expect.poll(async () => (await (await request.get("/api/config", { headers: auth })).json()).state).toBe("absent");
});

test("the Agents page marks the file's agents and shows every error of a refused file with its line and field", async ({ page }, testInfo) => {
  writeFileSync(configFile, GOOD);
  await signIn(page);
  await page.goto("/agents");
  const row = page.getByRole("row").filter({ hasText: "from_file" });
  await expect(row.getByText("from file", { exact: true })).toBeVisible();
  await expect(row.getByText(`Edit it in ${configFile}`)).toBeVisible();
  await expect(row.getByRole("button", { name: "Edit from_file" })).toHaveCount(0);
  await expect(row.getByLabel("from_file enabled")).toBeDisabled();

  // The banner follows the file over the live connection: the panel's own reads of it are refused from here on.
  await page.route("**/api/config", (route) => route.abort());
  writeFileSync(configFile, BAD);
  const banner = page.getByRole("alert", { name: "Config file refused" });
  await expect(banner).toBeVisible();
  // Every error at once, each where it is.
  await expect(banner).toContainText("was not loaded: 2 errors");
  await expect(banner.getByRole("listitem")).toHaveText([
    "line 4, column 5, at agents.from_file.colour: unknown field colour",
    /^line 5, column 1, at servers: Corral does not reach servers over ssh; remove servers: to run an agent on another machine, start `corral runner` there/,
  ]);
  await expect(banner).toContainText("(from_file) keep running");
  await expect(row).toBeVisible();
  await snapshot(page, testInfo, "config-file-refused");
  await expectAccessible(page, "Agents with a refused config file");

  writeFileSync(configFile, GOOD);
  await expect(banner).toHaveCount(0);
  // The file removed: its agent goes from the list (it ran no job).
  rmSync(configFile);
  await expect(row).toHaveCount(0);
});

test("the Agents page exports the agents, budgets and prices as corral.yaml, without env values", async ({ page, request }, testInfo) => {
  const name = `export_${testInfo.project.name}`;
  const created = await request.post("/api/agents", {
    headers: auth,
    data: { name, kind: "command", command: "/bin/echo", args: ["{prompt}"], env: { SOME_KEY: "s3cret-value-never-exported" } },
  });
  expect(created.status()).toBe(201);
  try {
    await signIn(page);
    await page.goto("/agents");
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export as corral.yaml" }).click()]);
    expect(download.suggestedFilename()).toBe("corral.yaml");
    const text = readFileSync(await download.path(), "utf8");
    expect(text).toContain(`  ${name}:\n    provider: command\n`);
    expect(text).toContain("SOME_KEY");
    expect(text).not.toContain("s3cret-value-never-exported");
    expect(text).not.toContain(token);
    await snapshot(page, testInfo, "config-file-export");
  } finally {
    await request.delete(`/api/agents/${name}`, { headers: auth });
  }
});
