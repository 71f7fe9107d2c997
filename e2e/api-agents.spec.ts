import { expect, test } from "@playwright/test";
import { startFakeOpenAI } from "../apps/server/test/fixtures/fake-llm/openai.js";
import { expectAccessible, launchFromForm, signIn, snapshot, workdir } from "./helpers.js";

/** A name unique to this project: desktop and phone share one server. */
const named = (base: string) => `${base}_${test.info().project.name}`;

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("an API agent is added in the panel with its API, role, tools and hosts, and runs its tool loop", async ({ page }, testInfo) => {
  const fake = await startFakeOpenAI([
    { kind: "tool", name: "write_file", args: { path: "note.md", content: "hello\n" }, usage: { input: 100, output: 10 } },
    { kind: "text", text: "Wrote note.md.", usage: { input: 120, output: 5 } },
  ]);
  try {
    const name = named("scout");
    await page.getByRole("link", { name: "Agents" }).click();
    await page.getByRole("button", { name: "Add an API agent" }).click();
    const dialog = page.getByRole("dialog");
    await expect(dialog.getByRole("heading", { name: "Add an API agent" })).toBeVisible();
    // Sent without a name from the dialog's bottom: the user is taken up to the Name, its error read with it.
    await dialog.getByRole("button", { name: "Add agent" }).click();
    await expect(dialog.getByLabel("Name", { exact: true })).toBeFocused();
    await expect(dialog.locator("#agent-name-error")).toBeInViewport();
    await expect(dialog.getByTestId("form-not-saved")).toHaveText("Not saved: fix Name");
    await snapshot(page, testInfo, "add-api-agent-refused");
    await dialog.getByLabel("Name", { exact: true }).fill(name);
    await expect(dialog.getByTestId("form-not-saved")).toHaveCount(0);
    await dialog.getByLabel("API", { exact: true }).selectOption("openai");
    await dialog.getByLabel("Base URL").fill(`${fake.url}/v1`);
    await dialog.getByLabel("Default model").fill("gpt-5");
    await dialog.getByLabel("Step limit").fill("8");
    await dialog.getByLabel("Role", { exact: true }).fill("You are a careful scout.");
    await expect(dialog.getByLabel("Hosts http_get may reach")).toHaveCount(0);
    await dialog.getByLabel(/^http_get/).check();
    await dialog.getByLabel("Hosts http_get may reach").fill("docs.example.com");
    await snapshot(page, testInfo, "add-api-agent");
    await expectAccessible(page, "the Add-an-API-agent dialog");
    await dialog.getByRole("button", { name: "Add agent" }).click();
    await expect(dialog).toHaveCount(0);

    // Saved as asked: the edit form reads it back.
    const row = page.getByRole("row").filter({ hasText: name });
    await row.getByRole("button", { name: "Edit" }).click();
    const edit = page.getByRole("dialog");
    await expect(edit.getByLabel("Role", { exact: true })).toHaveValue("You are a careful scout.");
    await expect(edit.getByLabel("Step limit")).toHaveValue("8");
    await expect(edit.getByLabel(/^http_get/)).toBeChecked();
    await expect(edit.getByLabel(/^bash/)).not.toBeChecked();
    await expect(edit.getByLabel("Hosts http_get may reach")).toHaveValue("docs.example.com");
    await edit.getByRole("button", { name: "Cancel" }).click();

    await launchFromForm(page, name, "Write a note", workdir("api-agent"));
    await expect(page.getByText("succeeded").first()).toBeVisible({ timeout: 15_000 });
    await expect(page.getByText("Wrote note.md.").first()).toBeVisible();
    await snapshot(page, testInfo, "api-agent-job");
  } finally {
    await fake.close();
  }
});
