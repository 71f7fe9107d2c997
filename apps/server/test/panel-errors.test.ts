import { rmSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import {
  ApiErrorCodeSchema,
  type AgentWithAvailability,
  type ApiError,
  type Budget,
  type Job,
  type OllamaLastKnown,
  type OllamaModelList,
} from "@corral/shared";
import { api, startServer, tempDir, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";
import { startFakeOllama } from "./fixtures/fake-ollama.js";

let server: TestServer | undefined;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await server?.close();
  server = undefined;
});

const launch = (s: TestServer, body: Record<string, unknown>) => api<ApiError & Job>(s, "POST", "/api/jobs", body);

/** zod's own wording ("Too small: expected number to be >0", "Invalid input: expected string"), which names no field. */
const zodWording = /too small|too big|expected [a-z]+|invalid input|invalid option|unrecognized key/i;

describe("API errors carry a code and the ids to act on it; MCP and REST keep their text", () => {
  test("a busy workdir, a used-up budget, a disabled agent and an agent that cannot be deleted", async () => {
    server = await startServer();
    const s = server;
    const workdir = path.join(s.root, "busy");
    const first = await launch(s, { agent: "gemini", prompt: "sleep 30", workdir });
    expect(first.status).toBe(201);
    cleanups.push(async () => void (await s.services.cancels.cancel(first.body.id)));

    const busy = await launch(s, { agent: "gemini", prompt: "hi", workdir });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ code: "workdir_busy", field: "workdir", jobId: first.body.id });
    expect(busy.body.error).toMatch(/corral_wait.*shared_workdir: true/);
    const mcp = await connectMcp(s);
    cleanups.push(() => mcp.close());
    const viaMcp = await mcp.callTool({ name: "gemini_run_async", arguments: { prompt: "hi", workdir } });
    expect(textOf(viaMcp)).toMatch(/^error: workdir: .*corral_wait.*shared_workdir: true/);
    const shared = await launch(s, { agent: "gemini", prompt: "hi", workdir, sharedWorkdir: true });
    expect(shared.status).toBe(201);

    const budget = await api<Budget>(s, "POST", "/api/costs/budgets", { provider: "google", period: "day", maxTokens: 1 });
    const used = await launch(s, { agent: "gemini", prompt: "write a.txt x", workdir: path.join(s.root, "budget") });
    await s.services.waits.waitFor([used.body.id], 20_000);
    const over = await launch(s, { agent: "gemini", prompt: "hi", workdir: path.join(s.root, "budget") });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: "budget_exceeded", budgetId: budget.body.id });
    // What the panel words its refusal from: whose budget, what it allows and used, when it starts again.
    expect(over.body.budget).toMatchObject({ provider: "google", period: "day", maxTokens: 1, maxCostUsd: null, periodEnd: budget.body.periodEnd });
    expect(over.body.budget?.usedTokens).toBeGreaterThanOrEqual(1);
    expect(over.body.error).toContain(`PATCH /api/costs/budgets/${budget.body.id}`);

    await api(s, "PATCH", "/api/agents/kiro", { enabled: false });
    const disabled = await launch(s, { agent: "kiro", prompt: "hi" });
    expect(disabled.status).toBe(409);
    expect(disabled.body).toMatchObject({ code: "agent_disabled", field: "agent", agent: "kiro" });

    const builtin = await api<ApiError>(s, "DELETE", "/api/agents/gemini");
    expect(builtin.status).toBe(409);
    expect(builtin.body).toMatchObject({ code: "agent_not_deletable", agent: "gemini" });
    expect(builtin.body.error).toContain("(enabled: false)");
  });

  test("every kind of refusal answers a documented code", async () => {
    server = await startServer();
    const bare = (url: string, init: RequestInit = {}) => fetch(`${server?.url}${url}`, init).then(async (r) => (await r.json()) as ApiError);
    const answers = [
      await bare("/api/jobs"),
      await bare("/api/no-such-thing", { headers: server.auth }),
      await bare("/api/jobs", { method: "POST", headers: { ...server.auth, "content-type": "application/json" }, body: "{nope" }),
      (await launch(server, { agent: "gemini", prompt: "" })).body,
      (await api<ApiError>(server, "GET", "/api/jobs/zzzzzzzz")).body,
    ];
    expect(answers.map((a) => a.code)).toEqual(["unauthorized", "not_found", "invalid_json", "invalid_input", "not_found"]);
    for (const a of answers) expect(ApiErrorCodeSchema.safeParse(a.code).success, JSON.stringify(a)).toBe(true);
  });
});

describe("refused input reads as sentences that name the field", () => {
  test("launch, agent, price and budget bodies: no zod wording, each message names its field", async () => {
    server = await startServer();
    const refusals = [
      await launch(server, { agent: "gemini", prompt: "", timeoutS: 0, maxCostUsd: -1, maxTokens: 1.5, retry: { attempts: "x" } }),
      await api<ApiError>(server, "POST", "/api/agents", { name: "mine", kind: "command", command: "", timeoutS: -3, maxConcurrent: 0, args: [1] }),
      await api<ApiError>(server, "PATCH", "/api/agents/gemini", { baseUrl: "not a url", enabled: "yes", timeout: 5 }),
      await api<ApiError>(server, "PUT", "/api/costs/prices", { provider: "x", model: "", inputPerM: -1, outputPerM: "a" }),
      await api<ApiError>(server, "POST", "/api/costs/budgets", { provider: "x", period: "week", maxCostUsd: 0 }),
    ];
    const issues = refusals.flatMap((r) => {
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      return r.body.issues ?? [];
    });
    expect(issues.length).toBeGreaterThan(12);
    for (const { field, message } of issues) {
      expect(message, `${field}: ${message}`).not.toMatch(zodWording);
      // Named as words ("the timeout", "the cost limit") or quoted, as the key it is.
      expect(message, `${field}: ${message}`).toMatch(/^(the |each |"|use )/);
    }
    expect(issues).toEqual(
      expect.arrayContaining([
        { field: "timeoutS", message: "the timeout must be at least 1" },
        { field: "maxCostUsd", message: "the cost limit must be more than 0" },
        { field: "maxTokens", message: "the token limit must be a whole number" },
        { field: "timeout", message: '"timeout" is not a field here' },
      ]),
    );
  });

  test("a CLI that is not installed says how to install it in one sentence", async () => {
    const emptyPath = tempDir("corral-nopath-");
    cleanups.push(() => rmSync(emptyPath, { recursive: true, force: true }));
    server = await startServer({ PATH: emptyPath });
    const agents = await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents");
    const missing = agents.body.agents.filter((a) => a.kind !== "ollama" && !a.availability.available);
    expect(missing.map((a) => a.name).sort()).toEqual(expect.arrayContaining(["agy", "claude", "codex", "copilot", "gemini", "kiro", "opencode"]));
    for (const a of missing) {
      const hint = a.availability.hint ?? "";
      // An ACP agent's program is its command: set there, not by CORRAL_<AGENT>_BIN.
      const elsewhere = a.kind === "acp" ? "set the agent's command to its absolute path" : "set CORRAL_[A-Z_]+_BIN to its path";
      expect(hint, a.name).toMatch(new RegExp(`^[\\w-]+ was not found on PATH; install [^;]+, or ${elsewhere}$`));
      expect(hint, a.name).not.toMatch(/\(install|install it \(/);
    }
  });
});

describe("Ollama's last known models", () => {
  test("kept with the time they were seen, and served while the server is down", async () => {
    const fake = await startFakeOllama([
      { name: "qwen2.5:7b", capabilities: ["completion", "tools"] },
      { name: "nomic-embed-text", capabilities: ["embedding"] },
    ]);
    let up = true;
    cleanups.push(() => (up ? fake.close() : undefined));
    server = await startServer();
    await api(server, "POST", "/api/agents", { name: "box", kind: "ollama", baseUrl: fake.url });
    const before = await api<OllamaLastKnown>(server, "GET", "/api/ollama/models/last-known?agent=box");
    expect(before.body).toEqual({ url: fake.url, seenAt: null, models: [] });
    const listed = await api<OllamaModelList>(server, "GET", "/api/ollama/models?agent=box");
    expect(listed.status).toBe(200);

    await fake.close();
    up = false;
    const down = await api<ApiError>(server, "GET", "/api/ollama/models?agent=box");
    expect(down.status).toBe(503);
    expect(down.body.code).toBe("ollama_unreachable");
    const last = await api<OllamaLastKnown>(server, "GET", "/api/ollama/models/last-known?agent=box");
    expect(last.body.seenAt).toBe(listed.body.models[0]?.checkedAt);
    expect(last.body.models.map((m) => [m.name, m.capabilities, m.loaded])).toEqual([
      ["nomic-embed-text:latest", ["embedding"], false],
      ["qwen2.5:7b", ["completion", "tools"], false],
    ]);
  });
});
