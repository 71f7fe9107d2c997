import type { HubMessage, HubReceived, HubRegistration } from "@corral/shared";
import { type APIRequestContext, expect, type TestInfo, test } from "@playwright/test";
import { expectAccessible, signIn, snapshot, token } from "./helpers.js";

/*
 * The Conversations page, with agents that join and talk over REST as a script would: the
 * sessions and their agents online or not, the messages arriving live, and a worker's answer
 * leading to the job that produced it.
 */

const auth = { authorization: `Bearer ${token}` };

/** One session per project and test: the desktop and phone runs share a server. */
const sessionName = (testInfo: TestInfo, what: string) => `${what}-${testInfo.project.name}`;

async function register(request: APIRequestContext, session: string, name: string, label?: string): Promise<string> {
  const res = await request.post(`/api/conversations/${session}/agents`, { headers: auth, data: { name, label } });
  expect(res.status(), await res.text()).toBe(201);
  return ((await res.json()) as HubRegistration).key;
}

async function send(request: APIRequestContext, session: string, key: string, to: string, text: string): Promise<HubMessage> {
  const res = await request.post(`/api/conversations/${session}/messages`, { headers: auth, data: { key, to, text } });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()) as HubMessage;
}

test("sessions list their agents, online or not, with their labels", async ({ page, request }, testInfo) => {
  const session = sessionName(testInfo, "pair");
  await register(request, session, "alice", "writes the patch");
  const bob = await register(request, session, "bob", "reviews it");
  const left = await request.post(`/api/conversations/${session}/leave`, { headers: auth, data: { key: bob } });
  expect(left.status()).toBe(204);

  await signIn(page);
  await page.getByRole("link", { name: "Conversations" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Conversations");
  await page
    .getByRole("navigation", { name: "Conversation sessions" })
    .getByRole("link", { name: new RegExp(session) })
    .click();
  await expect(page).toHaveURL(new RegExp(`session=${session}`));
  const agents = page.getByRole("list", { name: "Agents" });
  await expect(agents.getByRole("listitem").filter({ hasText: "alice" })).toContainText("online");
  await expect(agents.getByRole("listitem").filter({ hasText: "alice" })).toContainText("writes the patch");
  await expect(agents.getByRole("listitem").filter({ hasText: "bob" })).toContainText("offline");
  await expect(page.getByRole("list", { name: "Corral's agents" }).getByRole("listitem").filter({ hasText: "gemini" })).toBeVisible();
  // Bob comes back while the page is open: the page hears of it without a reload.
  await register(request, session, "bob", "reviews it");
  await expect(agents.getByRole("listitem").filter({ hasText: "bob" })).toContainText("online");
  await snapshot(page, testInfo, "conversations-agents");
  await expectAccessible(page, "the Conversations page");
});

test("messages appear in the timeline as they are sent", async ({ page, request }, testInfo) => {
  const session = sessionName(testInfo, "live");
  const alice = await register(request, session, "alice");
  const bob = await register(request, session, "bob");
  await send(request, session, alice, "bob", "please review parser.ts");

  await signIn(page);
  await page.goto(`/conversations?session=${session}`);
  const log = page.getByRole("log", { name: `Messages of ${session}` });
  await expect(log.getByRole("listitem")).toHaveCount(1);
  await expect(log).toContainText("please review parser.ts");

  await send(request, session, bob, "alice", "line 12 leaks a handle\nand line 40 too");
  await send(request, session, alice, "bob", "fixed, thanks");
  await expect(log.getByRole("listitem")).toHaveCount(3);
  await expect(log.getByRole("listitem").nth(1)).toContainText(/bob\s*→\s*alice/);
  await expect(log.getByRole("listitem").nth(1)).toContainText("line 12 leaks a handle");
  await expect(log.getByRole("listitem").nth(2)).toContainText("fixed, thanks");
  await snapshot(page, testInfo, "conversations-timeline");
  await expectAccessible(page, "a conversation's timeline");
});

test("a worker's answer links to the job that produced it", async ({ page, request }, testInfo) => {
  const session = sessionName(testInfo, "worker");
  const lead = await register(request, session, "lead", "the orchestrator");
  await signIn(page);
  await page.goto(`/conversations?session=${session}`);
  const log = page.getByRole("log", { name: `Messages of ${session}` });

  const sent = await send(request, session, lead, "gemini", "summarise the notes");
  expect(sent.jobId).not.toBeNull();
  const received = await request.post(`/api/conversations/${session}/receive`, { headers: auth, data: { key: lead, timeoutS: 30 } });
  const answer = ((await received.json()) as HubReceived).messages[0];
  expect(answer).toMatchObject({ from: "gemini", to: "lead", jobId: sent.jobId });

  await expect(log.getByRole("listitem")).toHaveCount(2);
  await expect(log.getByRole("link", { name: `ran as job ${sent.jobId}` })).toBeVisible();
  const link = log.getByRole("link", { name: `answer of job ${sent.jobId}` });
  await expect(link).toBeVisible();
  await snapshot(page, testInfo, "conversations-worker");
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/jobs/${sent.jobId}$`));
  await expect(page.locator("[data-status]").first()).toHaveAttribute("data-status", "succeeded");
});
