import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { Budget, CostReport, Job, JobList, OutputPage, PriceList } from "@corral/shared";
import { api, startServer, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface ErrorBody {
  error: string;
  field?: string;
}

async function run(s: TestServer, body: Record<string, unknown>): Promise<Job> {
  const launched = await api<Job>(s, "POST", "/api/jobs", { workdir: path.join(s.root, "work", String(body.agent)), ...body });
  expect(launched.status, JSON.stringify(launched.body)).toBe(201);
  const [job] = await s.services.waits.waitFor([launched.body.id], 20_000);
  return job as Job;
}

const report = async (s: TestServer, query = "groupBy=provider") => (await api<CostReport>(s, "GET", `/api/costs?${query}`)).body;

describe("cost accounting", () => {
  test("jobs on three providers: totals are the sum of the jobs; an unpriced model shows its tokens until it is priced", async () => {
    server = await startServer();
    const gemini = await run(server, { agent: "gemini", prompt: "write a.txt x" });
    const claude = await run(server, { agent: "claude", prompt: "write a.txt x", model: "claude-sonnet-4-5" });
    const codex = await run(server, { agent: "codex", prompt: "write a.txt x", model: "my-finetune" });
    for (const job of [gemini, claude, codex]) expect(job.status).toBe("succeeded");

    // gemini: no cost in its output, so the table prices it (2400 fresh, 100 cached, 52 + 7 thought tokens out).
    expect(gemini.provider).toBe("google");
    expect(gemini.finalText).toBe("wrote a.txt\ndone gemini");
    expect(gemini.usage).toMatchObject({
      model: "gemini-2.5-flash",
      inputTokens: 2500,
      outputTokens: 59,
      cachedInputTokens: 100,
      costSource: "estimated",
    });
    expect(gemini.usage.costUsd).toBeCloseTo((2400 * 0.3 + 100 * 0.03 + 59 * 2.5) / 1e6, 12);
    // claude: the CLI's own cost.
    expect(claude.usage).toMatchObject({
      model: "claude-sonnet-4-5",
      inputTokens: 2650,
      outputTokens: 52,
      costUsd: 0.0084975,
      costSource: "reported",
    });
    // codex: no cost in its output and no price for this model.
    expect(codex.usage).toMatchObject({ model: "my-finetune", inputTokens: 2500, outputTokens: 52, costUsd: null, costSource: null });

    const byProvider = await report(server);
    const jobs = (await api<JobList>(server, "GET", "/api/jobs?limit=100")).body.jobs;
    for (const group of byProvider.groups) {
      const mine = jobs.filter((j) => j.provider === group.provider);
      expect(group.jobs).toBe(mine.length);
      expect(group.inputTokens).toBe(mine.reduce((n, j) => n + (j.usage.inputTokens ?? 0), 0));
      expect(group.outputTokens).toBe(mine.reduce((n, j) => n + (j.usage.outputTokens ?? 0), 0));
      const priced = mine.filter((j) => j.usage.costUsd !== null);
      if (priced.length)
        expect(group.costUsd).toBeCloseTo(
          priced.reduce((n, j) => n + (j.usage.costUsd ?? 0), 0),
          12,
        );
      else expect(group.costUsd).toBeNull();
    }
    const openai = byProvider.groups.find((g) => g.provider === "openai");
    expect(openai).toMatchObject({ costUsd: null, unpricedJobs: 1, unpricedInputTokens: 2500, unpricedOutputTokens: 52 });
    expect(byProvider.totals.costUsd).toBeCloseTo((gemini.usage.costUsd ?? 0) + 0.0084975, 12);
    expect(byProvider.totals.unpricedJobs).toBe(1);

    const priced = await api(server, "PUT", "/api/costs/prices", {
      provider: "openai",
      model: "my-finetune",
      inputPerM: 1,
      outputPerM: 10,
      cachedInputPerM: 0.1,
    });
    expect(priced.status).toBe(200);
    const expected = (2400 * 1 + 100 * 0.1 + 52 * 10) / 1e6;
    expect((await server.services.jobs.get(codex.id)).usage).toMatchObject({ costSource: "estimated" });
    expect((await server.services.jobs.get(codex.id)).usage.costUsd).toBeCloseTo(expected, 12);
    const after = await report(server);
    expect(after.groups.find((g) => g.provider === "openai")).toMatchObject({ unpricedJobs: 0, pricedJobs: 1 });
    expect(after.groups.find((g) => g.provider === "openai")?.costUsd).toBeCloseTo(expected, 12);
    expect(after.totals.costUsd).toBeCloseTo((byProvider.totals.costUsd ?? 0) + expected, 12);

    // Removing the override makes it unpriced again; the shipped table's rows cannot be deleted.
    expect((await api(server, "DELETE", "/api/costs/prices?provider=openai&model=my-finetune")).status).toBe(204);
    expect((await server.services.jobs.get(codex.id)).usage.costUsd).toBeNull();
    const gone = await api<ErrorBody>(server, "DELETE", "/api/costs/prices?provider=google&model=gemini-2.5-flash");
    expect(gone.status).toBe(404);
  });

  test("an ended job's `_done` answer, kept between polls, follows a new price of its model", async () => {
    server = await startServer();
    const codex = await run(server, { agent: "codex", prompt: "write a.txt x", model: "my-finetune" });
    expect(codex.status).toBe("succeeded");
    const client = await connectMcp(server);
    const done = async () => textOf(await client.callTool({ name: "codex_done", arguments: { job_id: codex.id } }));
    const unpriced = await done();
    expect(unpriced).toMatch(/^listo\n/);
    expect(unpriced).toContain("cost unknown (no price for this model)");
    expect(await done()).toBe(unpriced);

    await api(server, "PUT", "/api/costs/prices", { provider: "openai", model: "my-finetune", inputPerM: 1, outputPerM: 10, cachedInputPerM: 0.1 });
    const priced = await done();
    expect(priced).toContain("$0.0029 (estimated)");
    expect(priced.replace(/ · \$0\.0029 \(estimated\)/, " · cost unknown (no price for this model)")).toBe(unpriced);
    expect(await done()).toBe(priced);

    expect((await api(server, "DELETE", "/api/costs/prices?provider=openai&model=my-finetune")).status).toBe(204);
    expect(await done()).toBe(unpriced);
    await client.close();
  });

  test("the report groups by model, agent and day, and filters by provider", async () => {
    server = await startServer();
    await run(server, { agent: "gemini", prompt: "hello" });
    await run(server, { agent: "gemini", prompt: "hello", model: "gemini-2.5-pro" });
    await run(server, { agent: "kiro", prompt: "hello" });
    const byModel = await report(server, "groupBy=provider,model,agent,day");
    const today = byModel.groups.map((g) => g.day);
    expect(new Set(today).size).toBe(1);
    expect(byModel.groups.filter((g) => g.provider === "google").map((g) => g.model)).toEqual(["gemini-2.5-flash", "gemini-2.5-pro"]);
    // kiro prints plain text: a job without usage, counted apart, not as $0.
    expect(byModel.groups.find((g) => g.agent === "kiro")).toMatchObject({ jobs: 1, noUsageJobs: 1, costUsd: null });
    const google = await report(server, "provider=google&groupBy=model");
    expect(google.totals.jobs).toBe(2);
    const future = await report(server, "from=2999-01-01&to=2999-01-02");
    expect(future.totals).toMatchObject({ jobs: 0, costUsd: null });
    const bad = await api<ErrorBody>(server, "GET", "/api/costs?groupBy=planet");
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe("groupBy.0");
    const reversed = await api<ErrorBody>(server, "GET", "/api/costs?from=2026-02-01&to=2026-01-01");
    expect(reversed.status).toBe(400);
    expect(reversed.body).toMatchObject({ field: "from", error: expect.stringContaining("must be before") });
    const notADay = await api<ErrorBody>(server, "GET", "/api/costs?from=last-week");
    expect(notADay.status).toBe(400);
    expect(notADay.body.field).toBe("from");
  });

  test("a codex job run without -m gets the model Codex's session record names, and can then be priced", async () => {
    server = await startServer();
    const job = await run(server, { agent: "codex", prompt: "write a.txt x" });
    expect(job.status).toBe("succeeded");
    expect(job.usage).toMatchObject({ model: "gpt-5.5", inputTokens: 2500, costUsd: null });
    const models = await report(server, "groupBy=provider,model");
    expect(models.groups.find((g) => g.provider === "openai")).toMatchObject({ model: "gpt-5.5", unpricedJobs: 1 });
    const set = await api(server, "PUT", "/api/costs/prices", { provider: "openai", model: "gpt-5.5", inputPerM: 2, outputPerM: 8 });
    expect(set.status).toBe(200);
    expect((await server.services.jobs.get(job.id)).usage).toMatchObject({ costSource: "estimated" });
    // A record that is not there (an older Codex, a home it could not write) leaves the model unknown, not made up.
    const codexHome = path.join(server.root, ".codex");
    rmSync(codexHome, { recursive: true, force: true });
    writeFileSync(codexHome, "");
    const unknown = await run(server, { agent: "codex", prompt: "hello" });
    expect(unknown.usage).toMatchObject({ model: null, inputTokens: 1300 });
  });

  test("prices: the shipped table with its date, overrides that win, and bad input named", async () => {
    server = await startServer();
    const list = (await api<PriceList>(server, "GET", "/api/costs/prices")).body;
    expect(list.tableDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(list.prices.find((p) => p.model === "gemini-2.5-flash")).toMatchObject({ provider: "google", origin: "table" });
    await api(server, "PUT", "/api/costs/prices", { provider: "google", model: "gemini-2.5-flash", inputPerM: 0.5, outputPerM: 3 });
    const after = (await api<PriceList>(server, "GET", "/api/costs/prices")).body;
    expect(after.prices.filter((p) => p.model === "gemini-2.5-flash")).toEqual([
      expect.objectContaining({ origin: "override", inputPerM: 0.5, outputPerM: 3, cachedInputPerM: null }),
    ]);
    const job = await run(server, { agent: "gemini", prompt: "hi" });
    expect(job.usage.costUsd).toBeCloseTo((1300 * 0.5 + 12 * 3) / 1e6, 12);
    const bad = await api<ErrorBody>(server, "PUT", "/api/costs/prices", { provider: "google", model: "x", inputPerM: -1, outputPerM: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe("inputPerM");
  });
});

describe("budgets", () => {
  test("a daily budget of $0.01 on a provider refuses the next job with a clear message", async () => {
    server = await startServer();
    const created = await api<Budget>(server, "POST", "/api/costs/budgets", { provider: "anthropic", period: "day", maxCostUsd: 0.01 });
    expect(created.status).toBe(201);
    // Two tool turns and an answer: Claude reports $0.0129.
    const first = await run(server, { agent: "claude", prompt: "write a.txt x\nwrite b.txt y", model: "claude-sonnet-4-5" });
    expect(first.usage.costUsd).toBeCloseTo(0.012915, 9);

    const refused = await api<ErrorBody>(server, "POST", "/api/jobs", { agent: "claude", prompt: "hi", workdir: path.join(server.root, "work") });
    expect(refused.status).toBe(429);
    expect(refused.body.field).toBe("agent");
    expect(refused.body.error).toMatch(
      /^budget exceeded: anthropic's daily budget is \$0\.010 and \$0\.013 is used today; raise it with PATCH \/api\/costs\/budgets\/\d+ or wait until \d{4}-\d{2}-\d{2} 00:00$/,
    );

    const budgets = (await api<{ budgets: Budget[] }>(server, "GET", "/api/costs/budgets")).body.budgets;
    expect(budgets).toEqual([expect.objectContaining({ provider: "anthropic", period: "day", exceeded: true, maxCostUsd: 0.01 })]);
    expect(budgets[0]?.usedCostUsd).toBeCloseTo(0.012915, 9);

    // The MCP door refuses the same way; other providers still run.
    const client = await connectMcp(server, "/mcp?toolsets=costs");
    const viaMcp = await client.callTool({ name: "claude_run_async", arguments: { prompt: "hi", workdir: path.join(server.root, "work") } });
    expect(viaMcp.isError).toBe(true);
    expect(textOf(viaMcp)).toMatch(/^error: agent: budget exceeded: anthropic's daily budget/);
    const costs = textOf(await client.callTool({ name: "corral_costs", arguments: { days: 1 } }));
    expect(costs).toContain("anthropic: 1 job(s) · 4,000 in / 92 out tokens · 200 cached · $0.013 ($0.013 reported)");
    expect(costs).toMatch(/budget \d+: anthropic per day · \$0\.013 of \$0\.010 · EXCEEDED/);
    await client.close();
    expect((await run(server, { agent: "gemini", prompt: "hi" })).status).toBe("succeeded");

    // Raising it lets jobs through again.
    const raised = await api<Budget>(server, "PATCH", `/api/costs/budgets/${created.body.id}`, { maxCostUsd: 1 });
    expect(raised.body.exceeded).toBe(false);
    expect((await run(server, { agent: "claude", prompt: "hi" })).status).toBe("succeeded");
  });

  test("a budget used up while a job waited in its agent's queue holds it back: it ends budget_exceeded, never started", async () => {
    server = await startServer();
    expect((await api(server, "PATCH", "/api/agents/claude", { maxConcurrent: 1 })).status).toBe(200);
    const workdir = (name: string) => path.join(server?.root ?? "", "work", name);
    // Two tool turns costing $0.0129 (reported at its end), then a pause that keeps the next job queued.
    const first = await api<Job>(server, "POST", "/api/jobs", {
      agent: "claude",
      prompt: "write a.txt x\nwrite b.txt y\nsleep 1",
      model: "claude-sonnet-4-5",
      workdir: workdir("first"),
    });
    const waiting = await api<Job>(server, "POST", "/api/jobs", { agent: "claude", prompt: "hi", workdir: workdir("waiting") });
    expect(waiting.body.status).toBe("queued");
    // The budget comes after both launches passed their check; the first job's cost uses it up.
    expect((await api(server, "POST", "/api/costs/budgets", { provider: "anthropic", period: "day", maxCostUsd: 0.01 })).status).toBe(201);
    const [ran, held] = (await server.services.waits.waitFor([first.body.id, waiting.body.id], 20_000)) as Job[];
    expect(ran?.status).toBe("succeeded");
    expect(held).toMatchObject({ status: "budget_exceeded", startedAt: null, pid: null });
    expect(held?.error).toMatch(/^budget exceeded: anthropic's daily budget is \$0\.010 and \$0\.013 is used today; raise it with PATCH/);
    expect((await api<{ attempts: unknown[] }>(server, "GET", `/api/jobs/${waiting.body.id}/attempts`)).body.attempts).toEqual([]);
  });

  test("a job's own cost limit a budget has no room for is refused, naming the field as each door spells it", async () => {
    server = await startServer();
    await api<Budget>(server, "POST", "/api/costs/budgets", { provider: "google", period: "day", maxCostUsd: 0.01 });
    const workdir = path.join(server.root, "work");
    const refused = await api<ErrorBody>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "hi", workdir, maxCostUsd: 1 });
    expect(refused.status).toBe(429);
    expect(refused.body.field).toBe("maxCostUsd");
    expect(refused.body.error).toMatch(/^budget exceeded: this job may cost up to \$1\.00/);
    const many = await api<ErrorBody>(server, "POST", "/api/jobs/many", { agents: ["gemini"], prompt: "hi", workdir, maxCostUsd: 1 });
    expect(many.body.field).toBe("maxCostUsd");

    const client = await connectMcp(server);
    try {
      const viaMcp = await client.callTool({ name: "gemini_run_async", arguments: { prompt: "hi", workdir, max_cost_usd: 1 } });
      expect(viaMcp.isError).toBe(true);
      expect(textOf(viaMcp)).toMatch(/^error: max_cost_usd: budget exceeded: this job may cost up to/);
      const viaMany = await client.callTool({ name: "corral_run_many", arguments: { agents: ["gemini"], prompt: "hi", workdir, max_cost_usd: 1 } });
      expect(textOf(viaMany)).toMatch(/^error: max_cost_usd: gemini: budget exceeded: this job may cost up to/);
    } finally {
      await client.close();
    }
    // Within the budget's room, the same limit launches.
    expect((await run(server, { agent: "gemini", prompt: "hi", maxCostUsd: 0.005 })).status).toBe("succeeded");
  });

  test("a budget needs a limit, one per provider and period, and names what is wrong", async () => {
    server = await startServer();
    const none = await api<ErrorBody>(server, "POST", "/api/costs/budgets", { provider: "google", period: "day" });
    expect(none.status).toBe(400);
    expect(none.body.field).toBe("maxCostUsd");
    const period = await api<ErrorBody>(server, "POST", "/api/costs/budgets", { provider: "google", period: "week", maxTokens: 5 });
    expect(period.body.field).toBe("period");
    const ok = await api<Budget>(server, "POST", "/api/costs/budgets", { provider: "google", period: "month", maxTokens: 1000 });
    expect(ok.status).toBe(201);
    const twice = await api<ErrorBody>(server, "POST", "/api/costs/budgets", { provider: "google", period: "month", maxTokens: 5 });
    expect(twice.status).toBe(409);
    // A provider Corral does not know (a typo) would count nothing forever: refused, naming the field and the known ones.
    for (const provider of ["antropic", "anthropic-", "-anthropic", "аnthropic", "x".repeat(101), ""]) {
      const typo = await api<ErrorBody>(server, "POST", "/api/costs/budgets", { provider, period: "day", maxCostUsd: 1 });
      expect(typo.status, provider).toBe(400);
      expect(typo.body.field, provider).toBe("provider");
    }
    const typo = await api<ErrorBody>(server, "POST", "/api/costs/budgets", { provider: "antropic", period: "day", maxCostUsd: 1 });
    expect(typo.body.error).toMatch(/^no provider "antropic" is known here; use one of .*\banthropic\b.*\bgoogle\b/);
    const list = (await api<{ budgets: Budget[]; providers: string[] }>(server, "GET", "/api/costs/budgets")).body;
    expect(list.providers).toEqual(expect.arrayContaining(["anthropic", "google", "ollama", "openai"]));
    expect(list.providers).not.toContain("antropic");
    expect(list.budgets.map((b) => b.source)).toEqual(["registry"]);
    // A registered agent's provider is known.
    const custom = await api<{ provider: string }>(server, "POST", "/api/agents", { name: "custom", kind: "command", command: "/bin/echo" });
    expect(custom.status, JSON.stringify(custom.body)).toBe(201);
    expect((await api(server, "POST", "/api/costs/budgets", { provider: custom.body.provider, period: "day", maxTokens: 5 })).status).toBe(201);
    // A token budget works for providers without prices too.
    await run(server, { agent: "gemini", prompt: "hi" });
    const refused = await api<ErrorBody>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "hi", workdir: path.join(server.root, "w") });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toContain("google's monthly budget is 1000 tokens and 1312 are used this month");
    expect((await api(server, "DELETE", `/api/costs/budgets/${ok.body.id}`)).status).toBe(204);
    expect((await api(server, "DELETE", `/api/costs/budgets/${ok.body.id}`)).status).toBe(404);
  });

  test("a per-job token limit stops a streaming job with budget_exceeded", async () => {
    server = await startServer();
    // OpenCode streams usage after every step: the first one (1240 tokens) passes the limit.
    const job = await run(server, { agent: "opencode", prompt: "write a.txt x\nsleep 30\nwrite b.txt y", maxTokens: 500 });
    expect(job.status).toBe("budget_exceeded");
    expect(job.error).toBe("budget exceeded: the job used 1240 tokens, over its token limit of 500");
    expect(job.limits).toEqual({ maxCostUsd: null, maxTokens: 500 });
    expect(existsSync(path.join(job.workdir, "a.txt"))).toBe(true);
    expect(existsSync(path.join(job.workdir, "b.txt"))).toBe(false);
  });

  test("a per-job cost limit stops a job once its running estimate passes it", async () => {
    server = await startServer();
    // Claude's per-message usage is priced from the table while it runs (the result line would be too late).
    const job = await run(server, { agent: "claude", prompt: "write a.txt x\nsleep 30", model: "claude-sonnet-4-5", maxCostUsd: 0.001 });
    expect(job.status).toBe("budget_exceeded");
    expect(job.error).toMatch(/^budget exceeded: the job cost \$0\.0038 \(estimated\), over its cost limit of \$0\.0010$/);
  });

  test("a cost limit on a model with no known price is said in the job's output as soon as its tokens come, never silently ignored", async () => {
    server = await startServer();
    const job = await run(server, { agent: "claude", prompt: "write a.txt x\nsleep 1", model: "claude-mystery-9", maxCostUsd: 0.001 });
    const page = (await api<OutputPage>(server, "GET", `/api/jobs/${job.id}/output?cursor=0`)).body;
    const said = page.chunks.filter((c) => c.text.includes("cannot stop it")).map((c) => c.text.trim());
    expect(said).toEqual([
      "[corral] no price is known for anthropic/claude-mystery-9, so its cost limit of $0.0010 cannot stop it while it runs (a cost its worker reports at its end still counts); set a price on the Costs page (PUT /api/costs/prices), or give it a token limit",
    ]);
    // Claude's result line reports the run's cost: it counts once reported, as the note says.
    expect(job.usage).toMatchObject({ costSource: "reported" });
    expect(job.usage.costUsd).toBeGreaterThan(0);
  });
});
