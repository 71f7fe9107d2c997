import { expect, type APIRequestContext, type Page, test } from "@playwright/test";
import { startFakeOllama } from "../apps/server/test/fixtures/fake-ollama.js";
import { signIn, snapshot, token, workdir } from "./helpers.js";

/** Words of the REST and MCP doors that a person in the panel cannot act on. */
const apiWords = /PATCH |\/api\/|corral_wait|shared_workdir|enabled: false|Too small|Too big|expected (number|string)|Invalid input/;

const auth = { authorization: `Bearer ${token}` };

/** A name unique to this project: desktop and phone share one server. */
const named = (base: string) => `${base}_${test.info().project.name}`;

async function rest<T>(request: APIRequestContext, method: string, url: string, data?: unknown): Promise<T> {
  const res = await request.fetch(url, { method, headers: auth, ...(data === undefined ? {} : { data }) });
  expect(res.ok(), `${method} ${url}: ${await res.text()}`).toBe(true);
  return (res.status() === 204 ? undefined : await res.json()) as T;
}

/** Opens Launch afresh (a page load), so agents made through REST are listed. */
async function openLaunch(page: Page) {
  await page.goto("/launch");
  await expect(page.getByRole("heading", { name: "Launch a job" })).toBeVisible();
}

const fieldError = (page: Page, id: string) => page.locator(`#${id}-error`);

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("launch: every error at once, client and server, each gone once its field is fixed", async ({ page }, testInfo) => {
  await openLaunch(page);
  await page.getByLabel("Agent").selectOption("gemini");
  await page.getByLabel("Prompt").fill("");
  await page.getByLabel("Timeout (seconds)").fill("0");
  await page.getByLabel("Workdir").fill(workdir("forms-errors"));
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await expect(fieldError(page, "launch-prompt")).toHaveText("the prompt is empty");
  await expect(fieldError(page, "launch-timeout")).toHaveText("the timeout must be at least 1");
  await snapshot(page, testInfo, "launch-errors-both");

  await page.getByLabel("Prompt").fill("print 1");
  await expect(fieldError(page, "launch-prompt")).toHaveCount(0);
  await expect(fieldError(page, "launch-timeout")).toHaveText("the timeout must be at least 1");
  await page.getByLabel("Timeout (seconds)").fill("30");
  await expect(fieldError(page, "launch-timeout")).toHaveCount(0);

  // The server's own refusal (a workdir outside the allowed roots) sits under its field, and goes once it is edited.
  await page.getByLabel("Workdir").fill("/etc/corral-forms");
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await expect(fieldError(page, "launch-workdir")).toBeVisible();
  await expect(page.getByRole("alert").filter({ hasText: "refused" })).toHaveCount(0);
  await page.getByLabel("Workdir").fill(workdir("forms-errors"));
  await expect(fieldError(page, "launch-workdir")).toHaveCount(0);

  // The limits sit under the prompt, each checked as the timeout is; the job runs with them.
  await page.getByLabel("Cost limit ($)").fill("-1");
  await page.getByLabel("Token limit").fill("lots");
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await expect(fieldError(page, "launch-max-cost")).toHaveText("the cost limit must be more than 0");
  await expect(fieldError(page, "launch-max-tokens")).toHaveText("the token limit must be a number");
  const top = async (label: string) => (await page.getByLabel(label).boundingBox())?.y ?? Number.NaN;
  expect(await top("Timeout (seconds)"), "the timeout comes after the prompt").toBeGreaterThan(await top("Prompt"));
  await page.getByLabel("Cost limit ($)").fill("$2.50");
  await page.getByLabel("Token limit").fill("200000");
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await page.waitForURL(/\/jobs\/[a-z0-9]+$/);
  await expect(page.getByRole("region", { name: "Usage and cost" })).toContainText("$2.50 cost · 200k tokens");
});

test("wording: form errors are sentences naming the field, install hints one sentence", async ({ page, request }, testInfo) => {
  // Agent form: the server refuses a negative timeout.
  await page.getByRole("link", { name: "Agents" }).click();
  await page.getByRole("button", { name: "Add a command agent" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name").fill(named("wording"));
  await dialog.getByLabel("Executable").fill("echo");
  await dialog.getByLabel("Timeout (s)").fill("-3");
  await dialog.getByRole("button", { name: "Add agent" }).click();
  await expect(dialog.locator("#agent-timeoutS-error")).toHaveText("the timeout must be at least 1");
  // Clicked at the dialog's bottom, the refusal takes the user to its field, and says so beside the button.
  await expect(dialog.getByLabel("Timeout (s)")).toBeFocused();
  await expect(dialog.locator("#agent-timeoutS-error")).toBeInViewport();
  await expect(dialog.getByTestId("form-not-saved")).toHaveText("Not saved: fix Timeout (s)");
  await expect(dialog).not.toContainText(apiWords);
  await snapshot(page, testInfo, "agent-form-wording");
  await dialog.getByLabel("Timeout (s)").fill("30");
  await expect(dialog.locator("#agent-timeoutS-error")).toHaveCount(0);
  await dialog.getByRole("button", { name: "Cancel" }).click();

  // Budget form (Costs): a zero cost limit.
  await page.getByRole("link", { name: "Costs" }).click();
  const budgetForm = page.getByRole("form", { name: "Add a budget" });
  await budgetForm.getByLabel("Provider").selectOption("google");
  await budgetForm.getByLabel("Max USD").fill("0");
  await budgetForm.getByRole("button").last().click();
  await expect(budgetForm.locator("#budget-cost-error")).toHaveText("the cost limit must be more than 0");

  // A CLI agent whose binary is missing: how to install it, in one sentence.
  const missing = named("kiro_missing");
  await rest(request, "POST", "/api/agents", { name: missing, kind: "kiro", command: "kiro-forms-missing" });
  await page.goto("/agents");
  const row = page.getByRole("table", { name: "Agents" }).getByRole("row").filter({ hasText: missing });
  await expect(row).toContainText(
    `kiro-forms-missing was not found on PATH; install Kiro CLI from kiro.dev (it provides kiro-cli-chat), or set CORRAL_${missing.toUpperCase()}_BIN to its path`,
  );
  await expect(row).not.toContainText("install it (");
  await rest(request, "DELETE", `/api/agents/${missing}`);
});

test("refusals in the panel's words, with the action in reach", async ({ page, request }, testInfo) => {
  // A busy workdir: say so and offer to share it.
  const busyDir = workdir("forms-busy");
  const running = await rest<{ id: string }>(request, "POST", "/api/jobs", { agent: "gemini", prompt: "sleep 20", workdir: busyDir });
  await openLaunch(page);
  await page.getByLabel("Agent").selectOption("gemini");
  await page.getByLabel("Prompt").fill("print 2");
  await page.getByLabel("Workdir").fill(busyDir);
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await expect(fieldError(page, "launch-workdir")).toContainText(`Job ${running.id} is still using this workdir`);
  await expect(page.getByRole("main")).not.toContainText(apiWords);
  const share = page.getByLabel(/Share the workdir with the running job/);
  await expect(share).toBeVisible();
  await snapshot(page, testInfo, "launch-busy-workdir");
  await share.check();
  await expect(fieldError(page, "launch-workdir")).toHaveCount(0);
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await page.waitForURL(/\/jobs\/[a-z0-9]+$/);
  await rest(request, "POST", `/api/jobs/${running.id}/cancel`);

  // A used-up budget: say so, and link to it on the Costs page.
  const provider = named("e2e-forms").replace(/_/g, "-");
  const spender = named("spender");
  await rest(request, "POST", "/api/agents", { name: spender, kind: "gemini", provider });
  const budget = await rest<{ id: number }>(request, "POST", "/api/costs/budgets", { provider, period: "day", maxTokens: 1 });
  const spent = await rest<{ id: string }>(request, "POST", "/api/jobs", { agent: spender, prompt: "print 1", workdir: workdir("forms-budget") });
  await expect.poll(async () => (await rest<{ status: string }>(request, "GET", `/api/jobs/${spent.id}`)).status).toBe("succeeded");
  await openLaunch(page);
  await page.getByLabel("Agent").selectOption(spender);
  await page.getByLabel("Prompt").fill("print 1");
  await page.getByLabel("Workdir").fill(workdir("forms-budget"));
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  const alert = page.getByRole("alert").filter({ hasText: "budget" });
  await expect(alert).toContainText(`${provider}'s daily budget of 1 token is used up`);
  await expect(page.locator("#launch-agent-error")).toHaveCount(0);
  await expect(page.getByRole("main")).not.toContainText(apiWords);
  await snapshot(page, testInfo, "launch-budget");
  await alert.getByRole("link", { name: "Open the budget on the Costs page" }).click();
  await expect(page).toHaveURL(new RegExp(`/costs#budget-${budget.id}$`));
  await expect(page.locator(`#budget-${budget.id}`)).toContainText(provider);
  await rest(request, "DELETE", `/api/costs/budgets/${budget.id}`);

  // A disabled agent (relaunching one of its jobs): an Enable button.
  await rest(request, "PATCH", `/api/agents/${spender}`, { enabled: false });
  await page.goto(`/launch?from=${spent.id}`);
  await expect(page.getByLabel("Prompt")).toHaveValue("print 1");
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await expect(page.getByRole("alert").filter({ hasText: "is disabled" })).toContainText(`${spender} is disabled, so it runs no jobs.`);
  await expect(page.getByRole("main")).not.toContainText(apiWords);
  await snapshot(page, testInfo, "launch-disabled-agent");
  await page.getByRole("button", { name: `Enable ${spender}` }).click();
  await expect(page.getByRole("alert").filter({ hasText: "is disabled" })).toHaveCount(0);
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await page.waitForURL(/\/jobs\/[a-z0-9]+$/);

  // An agent with history cannot be deleted: a Disable button instead.
  await page.goto("/agents");
  page.once("dialog", (d) => void d.accept());
  await page.getByRole("button", { name: `Delete ${spender}` }).click();
  const refusal = page.getByRole("alert").filter({ hasText: `${spender} cannot be deleted while its jobs are in the history` });
  await expect(refusal).toBeVisible();
  await expect(refusal).not.toContainText(apiWords);
  await snapshot(page, testInfo, "agents-cannot-delete");
  await refusal.getByRole("button", { name: `Disable ${spender}` }).click();
  await expect(page.getByLabel(`${spender} enabled`)).not.toBeChecked();
});

test("launch remembers the last agent and workdir, and marks unavailable agents with why", async ({ page, request }, testInfo) => {
  const dir = workdir("forms-remembered");
  await openLaunch(page);
  await page.getByLabel("Agent").selectOption("claude");
  await page.getByLabel("Prompt").fill("print 1");
  await page.getByLabel("Workdir").fill(dir);
  await page.getByRole("button", { name: "Launch", exact: true }).click();
  await page.waitForURL(/\/jobs\/[a-z0-9]+$/);
  await openLaunch(page);
  await expect(page.getByLabel("Agent")).toHaveValue("claude");
  await expect(page.getByLabel("Workdir")).toHaveValue(dir);

  const missing = named("not_here");
  await rest(request, "POST", "/api/agents", { name: missing, kind: "command", command: "forms-no-such-cli" });
  await page.reload();
  const option = page.locator("#launch-agent optgroup[label='Not available on this machine'] option", { hasText: missing });
  await expect(option).toHaveText(`${missing} (not available)`);
  await page.getByLabel("Agent").selectOption(missing);
  await expect(page.getByRole("status").filter({ hasText: "not available" })).toContainText("forms-no-such-cli was not found on PATH");
  await snapshot(page, testInfo, "launch-unavailable-agent");
  await rest(request, "DELETE", `/api/agents/${missing}`);
});

test("connect: the token is masked until revealed, and Copy copies the real one", async ({ page, context }, testInfo) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByRole("link", { name: "Connect" }).click();
  const all = page.getByLabel("claude mcp add command for all agents");
  await expect(all).toContainText("Authorization: Bearer ••••");
  await expect(page.getByRole("main")).not.toContainText(token);
  await snapshot(page, testInfo, "connect-masked");
  await all.locator("xpath=..").getByRole("button", { name: "Copy" }).click();
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain(`Bearer ${token}`);
  await page.getByRole("button", { name: "Reveal the token" }).click();
  await expect(all).toContainText(`Bearer ${token}`);
  await expect(page.getByLabel("claude mcp add command for gemini")).toContainText(`Bearer ${token}`);
  await page.getByRole("button", { name: "Hide the token" }).click();
  await expect(page.getByRole("main")).not.toContainText(token);
});

test("ollama: no probe for embedding models; while down, said once, with the last known models", async ({ page, request }, testInfo) => {
  await page.getByRole("link", { name: "Ollama" }).click();
  const models = page.getByRole("table", { name: "Ollama models" });
  const embed = models.getByRole("row").filter({ hasText: "nomic-embed-text" });
  await expect(embed).toContainText("embedding model");
  await expect(embed.getByRole("button")).toHaveCount(0);
  await expect(models.getByRole("row").filter({ hasText: "qwen2.5:7b" }).getByRole("button", { name: /Probe/ })).toBeVisible();

  const fake = await startFakeOllama([{ name: "llama3.1:8b", capabilities: ["completion", "tools"], family: "llama" }]);
  const agent = named("ollama_down");
  try {
    await rest(request, "POST", "/api/agents", { name: agent, kind: "ollama", baseUrl: fake.url });
    await page.reload();
    await page.getByLabel("Ollama server").selectOption(agent);
    await expect(models.getByRole("row").filter({ hasText: "llama3.1:8b" })).toBeVisible();
  } finally {
    await fake.close();
  }
  await page.getByRole("button", { name: "Check again" }).click();
  const alert = page.getByRole("alert").filter({ hasText: "not reachable" });
  await expect(alert).toContainText(`Ollama is not reachable at ${fake.url}.`);
  await expect(page.getByText(/not reachable/)).toHaveCount(1);
  await expect(page.getByText(/ollama serve/)).toHaveCount(1);
  // In the panel's one date format ("Last seen today 8:09:07 PM"; pages.spec checks the format).
  await expect(page.getByRole("heading", { name: /^Last seen \w/ })).toBeVisible();
  const last = page.getByRole("table", { name: "Ollama models when last seen" });
  await expect(last.getByRole("row").filter({ hasText: "llama3.1:8b" })).toBeVisible();
  await expect(last.getByRole("button")).toHaveCount(0);
  await snapshot(page, testInfo, "ollama-down");
  await rest(request, "DELETE", `/api/agents/${agent}`);
});
