import { expect, test } from "@playwright/test";
import { expectAccessible, signIn, snapshot, token } from "./helpers.js";

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("agents: availability, enable and disable, add a command agent", async ({ page }, testInfo) => {
  // The desktop and phone runs share one server: each adds an agent of its own.
  const name = `echoer_${testInfo.project.name}`;
  await page.getByRole("link", { name: "Agents" }).click();
  const table = page.getByRole("table", { name: "Agents" });
  // The row whose name is gemini: agy's description mentions Gemini too.
  const gemini = table.getByRole("row").filter({ hasText: /^\s*gemini\b/ });
  await expect(gemini).toContainText("available");
  // The CLI's own answer to --version (the fake CLIs say "<cli> 9.9.9-fake").
  await expect(gemini).toContainText("gemini 9.9.9-fake");
  await page.getByRole("button", { name: "Add a command agent" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name").fill(name);
  await dialog.getByRole("button", { name: "Add agent" }).click();
  await expect(dialog.getByRole("alert")).toContainText("executable");
  await dialog.getByLabel("Executable").fill("echo");
  await dialog.getByRole("button", { name: "Add agent" }).click();
  await expect(dialog).toBeHidden();
  const row = table.getByRole("row").filter({ hasText: name });
  await expect(row).toContainText("available");
  await row.getByLabel(`${name} enabled`).click();
  await expect(row.getByLabel(`${name} enabled`)).not.toBeChecked();
  await snapshot(page, testInfo, "agents");
});

test("connect: MCP commands with the real token and the permissions snippet", async ({ page }, testInfo) => {
  await page.getByRole("link", { name: "Connect" }).click();
  // The token is masked on screen until revealed (forms.spec.ts checks the mask and the copy).
  await page.getByRole("button", { name: "Reveal the token" }).click();
  const all = page.getByLabel("claude mcp add command for all agents");
  await expect(all).toContainText(
    `claude mcp add --transport http corral http://127.0.0.1:${process.env.CORRAL_E2E_PORT}/mcp --header 'Authorization: Bearer ${process.env.CORRAL_E2E_TOKEN}'`,
  );
  await expect(page.getByLabel("claude mcp add command for gemini")).toContainText("/mcp/gemini");
  // Toolsets picked go into the URL, quoted for the shell.
  await page.getByRole("checkbox", { name: /^hub / }).check();
  await page.getByRole("checkbox", { name: /^options=all / }).check();
  await expect(all).toContainText(`corral 'http://127.0.0.1:${process.env.CORRAL_E2E_PORT}/mcp?toolsets=hub&options=all' --header`);
  await page.getByRole("checkbox", { name: /^worktrees / }).check();
  await expect(all).toContainText("/mcp?toolsets=worktrees,hub&options=all");
  await expect(page.getByLabel("permissions snippet")).toContainText("mcp__corral__*");
  await expect(page.getByLabel("permissions snippet")).toContainText("mcp__gemini__*");
  await snapshot(page, testInfo, "connect");
});

test("api reference: every route from the server's OpenAPI document, with parameters, bodies, answers and types", async ({ page }, testInfo) => {
  await page.getByRole("link", { name: "API", exact: true }).click();
  await expect(page.getByRole("heading", { name: "API reference" })).toBeVisible();
  const launch = page.locator("details", { hasText: "Launch a job" });
  await launch.locator("summary").click();
  await expect(launch.getByLabel("Body of POST /api/jobs")).toContainText("prompt: string");
  await expect(launch.getByLabel("Response 201 of POST /api/jobs")).toContainText("Job");
  const output = page.locator("details", { hasText: "A page of the job's output" });
  await output.locator("summary").click();
  await expect(output.getByRole("table", { name: "Parameters of GET /api/jobs/{id}/output" })).toContainText("cursor");
  await expect(page.getByLabel("Type ApiError")).toContainText("field?: string");
  await page.getByLabel("Filter routes").fill("budgets");
  await expect(page.locator("details", { hasText: "Launch a job" })).toHaveCount(0);
  await expect(page.locator("details", { hasText: "/api/costs/budgets" }).first()).toBeVisible();
  await snapshot(page, testInfo, "api-reference");
});

test("connect: signed-in browsers, one signed out, then everywhere", async ({ page, browser }, testInfo) => {
  const other = await browser.newPage();
  await signIn(other);
  await page.getByRole("link", { name: "Connect" }).click();
  const sessions = page.getByRole("table", { name: "Signed-in browsers" });
  const here = sessions.getByRole("row").filter({ hasText: "this browser" });
  await expect(here).toHaveCount(1);
  // A browser by the name a person knows, the string it sent in the tooltip.
  await expect(here.getByRole("cell").first()).toContainText(/Chrom(e|ium) \d+ on Linux/);
  await expect(here.getByRole("cell").first()).not.toContainText("Mozilla");
  await expect(here.getByTitle(/^Mozilla\/5\.0 /)).toBeVisible();
  await expect.poll(() => sessions.getByRole("button", { name: /^Sign out/ }).count()).toBeGreaterThanOrEqual(2);
  await snapshot(page, testInfo, "connect-sessions");
  // The other browser signs itself out here: its panel then says how to sign in again.
  await other.getByRole("link", { name: "Connect" }).click();
  await other.getByRole("table", { name: "Signed-in browsers" }).getByRole("button", { name: "Sign out here" }).click();
  await other.reload();
  await expect(other.getByRole("alert")).toContainText("not signed in");
  await expect(page.getByRole("table", { name: "Signed-in browsers" })).toBeVisible();
  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("button", { name: "Sign out everywhere" }).click();
  await expect(page.getByRole("alert").first()).toContainText("not signed in");
  await other.close();
});

test("sign-in: a browser turned away sees why and signs in with the token, with nothing of the panel behind", async ({ browser }, testInfo) => {
  // A browser of its own: no session.
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto("/costs");
    await expect(page.getByRole("heading", { name: "Sign in to Corral" })).toBeVisible();
    await expect(page.getByRole("alert")).toHaveCount(1);
    await expect(page.getByRole("alert")).toHaveText("This browser is not signed in.");
    await expect(page.getByRole("navigation")).toHaveCount(0);
    await expect(page.getByText(/polling|live/)).toHaveCount(0);
    await expect(page).toHaveTitle("Sign in · Corral");
    await expectAccessible(page, "the sign-in page");
    await snapshot(page, testInfo, "sign-in");

    // A wrong token in the address is said apart from none.
    await page.goto("/costs?token=not-this-servers-token-0123");
    await expect(page.getByRole("alert")).toContainText("the token in this address is not this server's");

    // A path that reads as another host keeps the token on this one.
    const origin = new URL(page.url()).origin;
    await page.goto(`${origin}//example.invalid/costs`);
    await page.getByLabel("Token").fill("not-this-servers-token-0123");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert")).toContainText("the token in this address is not this server's");
    expect(new URL(page.url()).origin).toBe(origin);
    await page.goto("/costs?token=not-this-servers-token-0123");

    // The token pasted signs in, on the page asked for.
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/costs" && !url.search.includes("token="));
    await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
    await expect(page.getByRole("heading", { name: "Sign in to Corral" })).toHaveCount(0);
  } finally {
    await context.close();
  }
});

test("ollama: models with capabilities, and a tool-calling probe", async ({ page }, testInfo) => {
  await page.getByRole("link", { name: "Ollama" }).click();
  const table = page.getByRole("table", { name: "Ollama models" });
  const qwen = table.getByRole("row").filter({ hasText: "qwen2.5:7b" });
  await expect(qwen).toContainText("tools");
  await expect(qwen).toContainText("loaded");
  await expect(table.getByRole("row").filter({ hasText: "gpt-oss:120b-cloud" })).toContainText("cloud");
  await expect(table.getByRole("row").filter({ hasText: "nomic-embed-text" })).toContainText("embedding");
  // The desktop and phone runs share one server: the second finds it probed already.
  await qwen.getByRole("button", { name: /^Probe (tool calling|again) for qwen2\.5:7b$/ }).click();
  await expect(qwen).toContainText("calls tools");
  // Probed, the button says what pressing it again does.
  await expect(qwen.getByRole("button", { name: "Probe again for qwen2.5:7b" })).toBeVisible();
  // When it was probed, as the rest of the panel says a moment, the whole date in its tooltip.
  await expect(qwen.locator("time")).toHaveText(/^(today|yesterday) \d/);
  await expect(qwen.locator("time")).toHaveAttribute("title", /\d{4}/);

  // Every model that can chat, one at a time, each result in its row; the embedding model is left out.
  await page.getByRole("button", { name: "Probe all models" }).click();
  await expect(page.getByRole("status").filter({ hasText: /^Probed/ })).toHaveText("Probed 3 models");
  const llava = table.getByRole("row").filter({ hasText: "llava:13b" });
  await expect(llava).toContainText("no tool support");
  await expect(llava.getByRole("button", { name: "Probe again for llava:13b" })).toBeVisible();
  await expect(table.getByRole("row").filter({ hasText: "gpt-oss:120b-cloud" })).toContainText("did not call the tool");
  await expect(table.getByRole("row").filter({ hasText: "nomic-embed-text" }).getByRole("button")).toHaveCount(0);
  await snapshot(page, testInfo, "ollama");

  // A model that thinks for long (its probe held here): the run says where it is, and Stop ends it there.
  let held = false;
  await page.route("**/api/ollama/probe", (route) => {
    if (route.request().postDataJSON()?.model !== "llava:13b") return route.continue();
    held = true;
  });
  await page.getByRole("button", { name: "Probe all models" }).click();
  await expect(page.getByRole("status").filter({ hasText: /^Probing/ })).toHaveText("Probing 2 of 3: llava:13b…");
  await expect(llava.getByRole("button", { name: "Probing… for llava:13b" })).toBeDisabled();
  expect(held).toBe(true);
  await snapshot(page, testInfo, "ollama-probing");
  await page.getByRole("button", { name: "Stop probing" }).click();
  await expect(page.getByRole("status").filter({ hasText: /^Stopped/ })).toHaveText("Stopped after 1 of 3");
  await expect(llava.getByRole("button", { name: "Probe again for llava:13b" })).toBeEnabled();
  await page.unrouteAll({ behavior: "ignoreErrors" });
});
