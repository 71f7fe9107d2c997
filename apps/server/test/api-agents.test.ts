import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { AgentWithAvailability, Job } from "@corral/shared";
import { startFakeAnthropic } from "./fixtures/fake-llm/anthropic.js";
import { startFakeGemini } from "./fixtures/fake-llm/gemini.js";
import { startFakeOpenAI } from "./fixtures/fake-llm/openai.js";
import type { FakeServer, Script } from "./fixtures/fake-llm/script.js";
import { listenOn, machineAddress } from "./fixtures/loopback.js";
import { matcherThreads } from "../src/lib/pattern-worker.js";
import { api, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { hasBwrap } from "./required-tool.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const KEY = "sk-test-not-a-real-key-42";

async function setup(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startServer({ SCOUT_KEY: KEY, ...env });
  cleanups.push(() => server.close());
  return server;
}

async function fakeOpenAI(script: Script): Promise<FakeServer> {
  const fake = await startFakeOpenAI(script);
  cleanups.push(() => fake.close());
  return fake;
}

async function createAgent(server: TestServer, fields: Record<string, unknown>): Promise<void> {
  const res = await api(server, "POST", "/api/agents", { name: "scout", kind: "api", apiKeyEnv: "SCOUT_KEY", ...fields });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

async function launch(server: TestServer, body: Record<string, unknown>): Promise<string> {
  const res = await api<Job>(server, "POST", "/api/jobs", { agent: "scout", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

const job = async (server: TestServer, id: string) => (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;
const ended = (server: TestServer, id: string) =>
  until(async () => {
    const row = await job(server, id);
    return ["queued", "running"].includes(row.status) ? undefined : row;
  });
const outputText = async (server: TestServer, id: string) =>
  (await api<{ chunks: { text: string }[] }>(server, "GET", `/api/jobs/${id}/output`)).body.chunks.map((c) => c.text).join("");

/** What the loop sent back to the model as tool results, in order (OpenAI chat wire format). */
function toolResults(fake: FakeServer): string[] {
  const last = fake.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)?.body as { messages: { role: string; content: string }[] };
  return last.messages.filter((m) => m.role === "tool").map((m) => m.content);
}

function workdirWith(server: TestServer, files: Record<string, string>): string {
  const dir = path.join(server.root, "work");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe("API agents", () => {
  test("an agent with a role and the grep and write_file tools writes a file from what it found; usage and cost appear", async () => {
    const server = await setup();
    const fake = await fakeOpenAI([
      { kind: "tool", name: "grep", args: { pattern: "codename" }, usage: { input: 1000, output: 20 } },
      {
        kind: "tool",
        name: "write_file",
        args: { path: "found.md", content: "The codename is BLUEBIRD.\n" },
        usage: { input: 1200, output: 30, cacheRead: 1000 },
      },
      { kind: "text", text: "Wrote found.md: the codename is BLUEBIRD.", usage: { input: 1300, output: 12 } },
    ]);
    await createAgent(server, {
      api: "openai",
      baseUrl: `${fake.url}/v1`,
      model: "gpt-5",
      role: "You are a scout. Find facts with grep and write them down.",
      tools: ["grep", "write_file"],
    });
    const agent = (await api<AgentWithAvailability>(server, "GET", "/api/agents/scout")).body;
    expect(agent.provider).toBe("openai");
    expect(JSON.stringify(agent)).not.toContain(KEY);
    const workdir = workdirWith(server, { "docs/plan.txt": "intro\nthe codename is BLUEBIRD\n" });

    const id = await launch(server, { prompt: "Find the codename and write it to found.md", workdir });
    const row = await ended(server, id);
    expect(row.status, row.error ?? "").toBe("succeeded");
    expect(row.finalText).toBe("Wrote found.md: the codename is BLUEBIRD.");
    expect(readFileSync(path.join(workdir, "found.md"), "utf8")).toBe("The codename is BLUEBIRD.\n");

    // The wire: the key from the server's environment, the role as system prompt, only the agent's tools.
    const first = fake.requests.find((r) => r.path.endsWith("/chat/completions"));
    expect(first?.headers.authorization).toBe(`Bearer ${KEY}`);
    const body = first?.body as { messages: { role: string; content: string }[]; tools: { function: { name: string } }[]; stream: boolean };
    expect(body.stream).toBe(true);
    expect(body.messages[0]).toEqual({ role: "system", content: "You are a scout. Find facts with grep and write them down." });
    expect(body.tools.map((t) => t.function.name)).toEqual(["grep", "write_file"]);
    expect(toolResults(fake)).toEqual(["docs/plan.txt:2: the codename is BLUEBIRD", "wrote 26 bytes to found.md"]);

    // Usage summed over the steps, cost estimated from the price table (gpt-5: $1.25 in, $0.125 cached, $10 out per M).
    expect(row.usage).toMatchObject({ model: "gpt-5", inputTokens: 3500, outputTokens: 62, cachedInputTokens: 1000, costSource: "estimated" });
    expect(row.usage.costUsd).toBeCloseTo((2500 * 1.25 + 1000 * 0.125 + 62 * 10) / 1e6, 9);

    const out = await outputText(server, id);
    expect(out).toContain('→ grep(pattern="codename")');
    expect(out).toContain("← docs/plan.txt:2: the codename is BLUEBIRD");
    expect(out).toContain("[api] step 1: input 1000 tok, output 20 tok, tool-calls");
    expect(out).toContain("[api] files written: found.md");
    expect(out).not.toContain(KEY);
  });

  test("declared in corral.yaml (role, provider openai/<model>, the grep and write_file tools), it writes a file from what it found; usage and cost appear", async () => {
    const fake = await fakeOpenAI([
      { kind: "tool", name: "grep", args: { pattern: "TODO" }, usage: { input: 800, output: 15 } },
      { kind: "tool", name: "write_file", args: { path: "todos.md", content: "- wire the retry\n" }, usage: { input: 900, output: 25 } },
      { kind: "text", text: "Wrote todos.md (1 TODO).", usage: { input: 1000, output: 8 } },
    ]);
    const root = tempDir();
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const config = path.join(root, "corral.yaml");
    writeFileSync(
      config,
      [
        "agents:",
        "  todo_finder:",
        "    role: You list the TODOs of a project in todos.md.",
        "    provider: openai/gpt-5",
        `    baseUrl: ${fake.url}/v1`,
        "    apiKeyEnv: SCOUT_KEY",
        "    tools: [grep, write_file]",
        "",
      ].join("\n"),
    );
    const server = await setup({ CORRAL_CONFIG: config });
    const agent = (await api<AgentWithAvailability>(server, "GET", "/api/agents/todo_finder")).body;
    expect(agent).toMatchObject({ kind: "api", api: "openai", model: "gpt-5", source: "file", tools: ["grep", "write_file"] });
    const workdir = workdirWith(server, { "src/retry.ts": "export const retry = 1; // TODO wire the retry\n" });

    const res = await api<Job>(server, "POST", "/api/jobs", { agent: "todo_finder", prompt: "List the TODOs", workdir });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const row = await ended(server, res.body.id);
    expect(row.status, row.error ?? "").toBe("succeeded");
    expect(readFileSync(path.join(workdir, "todos.md"), "utf8")).toBe("- wire the retry\n");
    const body = fake.requests.find((r) => r.path.endsWith("/chat/completions"))?.body as { messages: { role: string; content: string }[] };
    expect(body.messages[0]).toEqual({ role: "system", content: "You list the TODOs of a project in todos.md." });
    expect(toolResults(fake)[0]).toContain("src/retry.ts:1:");
    expect(row.usage).toMatchObject({ model: "gpt-5", inputTokens: 2700, outputTokens: 48, costSource: "estimated" });
    expect(row.usage.costUsd).toBeCloseTo((2700 * 1.25 + 48 * 10) / 1e6, 9);
  });

  test("the Anthropic API: the role is the system prompt, the key goes in x-api-key, tool calls run", async () => {
    const server = await setup();
    const fake = await startFakeAnthropic([
      { kind: "tool", name: "list_files", args: {}, usage: { input: 50, output: 5 } },
      { kind: "text", text: "There is one file.", usage: { input: 80, output: 6 } },
    ]);
    cleanups.push(() => fake.close());
    await createAgent(server, { api: "anthropic", baseUrl: `${fake.url}/v1`, model: "claude-haiku-4-5", role: "Be brief.", tools: ["list_files"] });
    const workdir = workdirWith(server, { "a.txt": "a" });
    const row = await ended(server, await launch(server, { prompt: "What is here?", workdir }));
    expect(row.status, row.error ?? "").toBe("succeeded");
    expect(row.finalText).toBe("There is one file.");
    const first = fake.requests.find((r) => r.path.endsWith("/v1/messages"));
    expect(first?.headers["x-api-key"]).toBe(KEY);
    expect(JSON.stringify((first?.body as { system?: unknown } | undefined)?.system)).toContain("Be brief.");
    expect(row.usage).toMatchObject({ model: "claude-haiku-4-5", inputTokens: 130, outputTokens: 11, costSource: "estimated" });
    expect(row.usage.costUsd).toBeGreaterThan(0);
  });

  test("the Google API: the key goes in x-goog-api-key, tool calls run, usage is summed", async () => {
    const server = await setup();
    const fake = await startFakeGemini([
      { kind: "tool", name: "write_file", args: { path: "g.txt", content: "g" }, usage: { input: 40, output: 4 } },
      { kind: "text", text: "Wrote g.txt.", usage: { input: 60, output: 3 } },
    ]);
    cleanups.push(() => fake.close());
    await createAgent(server, { api: "google", baseUrl: `${fake.url}/v1beta`, model: "gemini-2.5-flash", tools: ["write_file"] });
    const workdir = workdirWith(server, {});
    const row = await ended(server, await launch(server, { prompt: "Write g.txt", workdir }));
    expect(row.status, row.error ?? "").toBe("succeeded");
    expect(row.finalText).toBe("Wrote g.txt.");
    expect(readFileSync(path.join(workdir, "g.txt"), "utf8")).toBe("g");
    expect(fake.requests.find((r) => r.path.includes(":streamGenerateContent"))?.headers["x-goog-api-key"]).toBe(KEY);
    expect(row.usage).toMatchObject({ model: "gemini-2.5-flash", inputTokens: 100, outputTokens: 7, costSource: "estimated" });
  });

  test.skipIf(!hasBwrap())("a bash call that writes outside the workdir is refused by the sandbox; inside it works", async () => {
    const server = await setup();
    const outside = tempDir("corral-outside-");
    cleanups.push(() => rmSync(outside, { recursive: true, force: true }));
    const escaped = path.join(outside, "escaped.txt");
    const fake = await fakeOpenAI([
      { kind: "tool", name: "bash", args: { command: `echo escaped > ${escaped}` }, usage: { input: 10, output: 5 } },
      { kind: "tool", name: "bash", args: { command: "echo inside > inside.txt && echo key=$SCOUT_KEY" }, usage: { input: 10, output: 5 } },
      { kind: "text", text: "done", usage: { input: 10, output: 1 } },
    ]);
    await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m", tools: ["bash"] });
    const workdir = workdirWith(server, {});
    const row = await ended(server, await launch(server, { prompt: "try", workdir }));
    expect(row.status, row.error ?? "").toBe("succeeded");
    expect(existsSync(escaped)).toBe(false);
    expect(readFileSync(path.join(workdir, "inside.txt"), "utf8")).toBe("inside\n");
    const [outsideResult, insideResult] = toolResults(fake);
    expect(outsideResult).toMatch(/\[exit status [1-9]\d*\]$/);
    // The agent's key is not in the command's environment.
    expect(insideResult).toBe("key=\n[exit status 0]");
  });

  test.skipIf(!hasBwrap())("in a worktree job, the model's git commit in bash lands on the job's branch", async () => {
    const server = await setup();
    const repo = workdirWith(server, { "app.txt": "one\n" });
    const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8" }).trim();
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "start");
    const commit = "echo two >> app.txt && git -c user.name=model -c user.email=m@x commit -qam 'the model commits' && git log --format=%s";
    const fake = await fakeOpenAI([
      { kind: "tool", name: "bash", args: { command: commit }, usage: { input: 10, output: 5 } },
      { kind: "text", text: "done", usage: { input: 10, output: 1 } },
    ]);
    await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m", tools: ["bash"] });
    const id = await launch(server, { prompt: "commit", workdir: repo, worktree: true });
    const row = await ended(server, id);
    expect(row.status, row.error ?? "").toBe("succeeded");
    expect(toolResults(fake)[0]).toBe("the model commits\nstart\n[exit status 0]");
    expect(git("log", "--format=%an %s", `corral/${id}`)).toBe("model the model commits\nu start");
    expect(git("log", "-1", "--format=%s", "main")).toBe("start");
  });

  test("bash is refused when bubblewrap is missing, and never runs unconfined", async () => {
    const server = await setup({ PATH: "/nonexistent" });
    const fake = await fakeOpenAI([
      { kind: "tool", name: "bash", args: { command: "echo ran > ran.txt" }, usage: { input: 10, output: 5 } },
      { kind: "text", text: "done", usage: { input: 10, output: 1 } },
    ]);
    await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m", tools: ["bash"] });
    const workdir = workdirWith(server, {});
    const row = await ended(server, await launch(server, { prompt: "run", workdir }));
    expect(row.status, row.error ?? "").toBe("succeeded");
    expect(toolResults(fake)[0]).toContain("error: refused: bash runs only inside the bubblewrap sandbox, and bubblewrap is not installed");
    expect(existsSync(path.join(workdir, "ran.txt"))).toBe(false);
  });

  // The site sits on this machine's own address off loopback: http_get refuses loopback (http-get.test.ts).
  const siteAddress = machineAddress();
  test.skipIf(!siteAddress)("http_get reaches allowed hosts only, redirects included", async () => {
    const server = await setup();
    // An allowed host: /ok answers, /hop redirects to /ok, /out redirects to localhost (a name not on the list).
    const site = await listenOn(
      createServer((req, res) => {
        const port = req.socket.localPort;
        if (req.url === "/ok") res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
        else if (req.url === "/hop") res.writeHead(302, { location: "/ok" }).end();
        else res.writeHead(302, { location: `http://localhost:${port}/ok` }).end();
      }),
      siteAddress ?? "",
    );
    cleanups.push(() => site.close());
    const fake = await fakeOpenAI([
      { kind: "tool", name: "http_get", args: { url: `${site.url}/out` }, usage: { input: 10, output: 5 } },
      { kind: "tool", name: "http_get", args: { url: "http://example.com/" }, usage: { input: 10, output: 5 } },
      { kind: "tool", name: "http_get", args: { url: `${site.url}/hop` }, usage: { input: 10, output: 5 } },
      { kind: "text", text: "done", usage: { input: 10, output: 1 } },
    ]);
    await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m", tools: ["http_get"], allowedHosts: [siteAddress ?? ""] });
    const row = await ended(server, await launch(server, { prompt: "fetch", workdir: workdirWith(server, {}) }));
    expect(row.status, row.error ?? "").toBe("succeeded");
    const [redirected, offList, allowed] = toolResults(fake);
    expect(redirected).toBe(`error: refused: localhost is not on this agent's allowedHosts (${siteAddress}); ask the user to add it`);
    expect(offList).toBe(`error: refused: example.com is not on this agent's allowedHosts (${siteAddress}); ask the user to add it`);
    expect(allowed).toBe(`HTTP 200 (application/json) from ${site.url}/ok\n\n{"ok":true}`);
  });

  test("cancel aborts the request to the API and ends the job cancelled", async () => {
    const server = await setup();
    const fake = await fakeOpenAI([{ kind: "hang" }]);
    await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m" });
    const id = await launch(server, { prompt: "think forever", workdir: workdirWith(server, {}) });
    const request = await until(() => fake.requests.find((r) => r.path.endsWith("/chat/completions")));
    expect(request.abandoned).toBeUndefined();
    expect((await api(server, "POST", `/api/jobs/${id}/cancel`)).status).toBe(200);
    const row = await ended(server, id);
    expect(row.status).toBe("cancelled");
    await until(() => request.abandoned || undefined, 5_000, "the API request to be dropped");
  });

  test("the timeout aborts the request too", async () => {
    const server = await setup();
    const fake = await fakeOpenAI([{ kind: "hang" }]);
    await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m", timeoutS: 1 });
    const row = await ended(server, await launch(server, { prompt: "think forever", workdir: workdirWith(server, {}) }));
    expect(row.status).toBe("timed_out");
    const request = fake.requests.find((r) => r.path.endsWith("/chat/completions"));
    await until(() => request?.abandoned || undefined, 5_000, "the API request to be dropped");
  });

  test("a missing key is a clear job error naming the variable, and the agent shows unavailable", async () => {
    const server = await setup();
    const fake = await fakeOpenAI([{ kind: "text", text: "never", usage: { input: 1, output: 1 } }]);
    await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m", apiKeyEnv: "NOT_SET_KEY" });
    const row = await ended(server, await launch(server, { prompt: "hi", workdir: workdirWith(server, {}) }));
    expect(row.status).toBe("failed");
    expect(row.error).toContain("NOT_SET_KEY, which is not set");
    expect(fake.requests).toEqual([]);
    const list = (await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents")).body.agents;
    expect(list.find((a) => a.name === "scout")?.availability).toMatchObject({ available: false, hint: expect.stringContaining("NOT_SET_KEY") });
  });

  test("an api agent without its API is refused, naming the field", async () => {
    const server = await setup();
    const res = await api<{ error: string; field: string }>(server, "POST", "/api/agents", { name: "scout", kind: "api", model: "m" });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe("api");
    expect(res.body.error).toContain("an api agent needs its API");
    await createAgent(server, { api: "openai", model: "m" });
    const cleared = await api<{ field: string }>(server, "PATCH", "/api/agents/scout", { api: null });
    expect(cleared).toMatchObject({ status: 400, body: { field: "api" } });
  });

  test("the step limit stops a model that keeps calling tools", async () => {
    const server = await setup();
    const fake = await fakeOpenAI([{ kind: "tool", name: "list_files", args: {}, usage: { input: 10, output: 5 } }]);
    await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m", maxSteps: 2 });
    const row = await ended(server, await launch(server, { prompt: "loop", workdir: workdirWith(server, {}) }));
    expect(row.status).toBe("failed");
    expect(row.error).toContain("stopped after 2 model steps without a final answer");
    expect(fake.requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(2);
  });

  test("a follow-up sends the earlier prompt and answer again", async () => {
    const server = await setup();
    const fake = await fakeOpenAI([{ kind: "text", text: "The answer is 42.", usage: { input: 10, output: 5 } }]);
    await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m" });
    const workdir = workdirWith(server, {});
    const first = await launch(server, { prompt: "What is the answer?", workdir });
    expect((await ended(server, first)).status).toBe("succeeded");
    const second = await launch(server, { prompt: "And doubled?", workdir, session: first });
    expect((await ended(server, second)).status).toBe("succeeded");
    const body = fake.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)?.body as { messages: { role: string; content: unknown }[] };
    expect(body.messages.slice(1)).toEqual([
      { role: "user", content: "What is the answer?" },
      { role: "assistant", content: "The answer is 42." },
      { role: "user", content: "And doubled?" },
    ]);
  });

  describe("a grep pattern that backtracks for hours", () => {
    // V8 takes minutes to hours to fail ^(a+)+$ on this line: matched on the event loop it would freeze the server.
    const EVIL = { "slow.txt": `${"a".repeat(32)}!\n` };

    test("is stopped at its deadline with an error the model can act on, and the server answers meanwhile", async () => {
      const server = await setup();
      const fake = await fakeOpenAI([
        { kind: "tool", name: "grep", args: { pattern: "^(a+)+$" }, usage: { input: 10, output: 5 } },
        { kind: "text", text: "gave up", usage: { input: 10, output: 5 } },
      ]);
      await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m", tools: ["grep"] });
      const id = await launch(server, { prompt: "find", workdir: workdirWith(server, EVIL) });
      await until(async () => (await outputText(server, id)).includes("→ grep(") || undefined, 15_000, "grep to be called");
      const health = await fetch(`${server.url}/api/health`);
      expect(health.status).toBe(200);
      // Answered while the pattern was still running: the tool has not answered the model yet.
      expect((await job(server, id)).status).toBe("running");
      expect(fake.requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(1);

      const row = await ended(server, id);
      expect(row.status, row.error ?? "").toBe("succeeded");
      expect(toolResults(fake)).toEqual([
        expect.stringMatching(
          /^error: refused: the pattern took longer than 10 s to match; simplify it \(nested quantifiers such as \(a\+\)\+ can take exponential time\)/,
        ),
      ]);
      await until(() => matcherThreads().busy === 0 || undefined, 10_000, "the stopped worker thread to exit");
    });

    test("a cancel ends the job at once and stops the thread matching it", async () => {
      const server = await setup();
      const fake = await fakeOpenAI([{ kind: "tool", name: "grep", args: { pattern: "^(a+)+$" }, usage: { input: 10, output: 5 } }]);
      await createAgent(server, { api: "openai", baseUrl: `${fake.url}/v1`, model: "m", tools: ["grep"] });
      const id = await launch(server, { prompt: "find", workdir: workdirWith(server, EVIL) });
      await until(() => matcherThreads().busy > 0 || undefined, 15_000, "grep to be matching");
      const { timedOut } = matcherThreads();
      expect((await api(server, "POST", `/api/jobs/${id}/cancel`)).status).toBe(200);
      expect((await ended(server, id)).status).toBe("cancelled");
      // Its thread was stopped by the cancel, before the job's end was told: not left to run to its deadline.
      expect(matcherThreads()).toMatchObject({ busy: 0, timedOut });
      expect(fake.requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(1);
    });
  });
});
