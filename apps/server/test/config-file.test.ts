import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import type { AgentList, ApiError, ConfigFileError, ConfigFileStatus, Job } from "@corral/shared";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { AppConfig } from "../src/config.js";
import { mapProvider } from "../src/config-file/providers.js";
import { meantFile } from "../src/config-file/service.js";
import { api, startServer, tempDir, type TestServer, until } from "./helpers.js";
import { registryOnPostgres, usePostgres } from "./postgres.js";
import { WsClient } from "./ws-client.js";

const servers: TestServer[] = [];
const dirs: string[] = [];
const postgres = usePostgres();
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A server whose data dir holds `corral.yaml` with `text` (or none) before it starts. */
async function serverWithFile(text: string | null, env: Record<string, string> = {}, logs?: string[]): Promise<{ server: TestServer; file: string }> {
  const root = tempDir();
  dirs.push(root);
  const dataDir = path.join(root, "data");
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, "corral.yaml");
  if (text !== null) writeFileSync(file, text);
  const logStream = logs
    ? new Writable({
        write(chunk, _enc, done) {
          logs.push(String(chunk));
          done();
        },
      })
    : undefined;
  const server = await startServer({ CORRAL_LOG_LEVEL: logs ? "info" : "silent", ...env }, { root, dataDir, logStream });
  servers.push(server);
  return { server, file };
}

/** As an editor saves: a new file renamed over the old one. */
function saveAtomically(file: string, text: string): void {
  const tmp = `${file}.swp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

const agentsOf = async (server: TestServer) => (await api<AgentList>(server, "GET", "/api/agents")).body.agents;
const statusOf = async (server: TestServer) => (await api<ConfigFileStatus>(server, "GET", "/api/config")).body;
const waitForStatus = (server: TestServer, check: (s: ConfigFileStatus) => boolean, what: string) =>
  until(
    async () => {
      const s = await statusOf(server);
      return check(s) ? s : undefined;
    },
    10_000,
    what,
  );

const TWO_AGENTS = `
agents:
  reviewer:
    provider: gemini
    model: gemini-2.5-pro
    description: Reviews
    timeoutS: 600
  scout:
    provider: claude-code
    role: You scout the code and say what is wrong.
    maxConcurrent: 2
budgets:
  - provider: google
    period: day
    maxCostUsd: 5
prices:
  - provider: google
    model: gemini-2.5-pro
    inputPerM: 1.5
    outputPerM: 12
`;

const GOOD_ONE_AGENT = "agents:\n  solo:\n    provider: gemini\n";

describe("agents in a file (CORRAL_CONFIG)", () => {
  it("loads the file's agents, budgets and prices at start, marked as from the file", async () => {
    const { server, file } = await serverWithFile(TWO_AGENTS);
    const status = await statusOf(server);
    expect(status).toMatchObject({ path: file, state: "loaded", agents: ["reviewer", "scout"], errors: [], hint: null });
    const agents = await agentsOf(server);
    const reviewer = agents.find((a) => a.name === "reviewer");
    expect(reviewer).toMatchObject({
      kind: "gemini",
      provider: "google",
      model: "gemini-2.5-pro",
      timeoutS: 600,
      source: "file",
      enabled: true,
    });
    expect(agents.find((a) => a.name === "scout")).toMatchObject({
      kind: "claude",
      provider: "anthropic",
      role: "You scout the code and say what is wrong.",
      maxConcurrent: 2,
      source: "file",
    });
    expect(agents.find((a) => a.name === "gemini")?.source).toBe("registry");
    const budgets = (await api<{ budgets: { provider: string; period: string; maxCostUsd: number }[] }>(server, "GET", "/api/costs/budgets")).body;
    expect(budgets.budgets).toEqual([expect.objectContaining({ provider: "google", period: "day", maxCostUsd: 5, source: "file" })]);
    const prices = (
      await api<{ prices: { provider: string; model: string; inputPerM: number; origin: string }[] }>(server, "GET", "/api/costs/prices")
    ).body;
    expect(prices.prices).toContainEqual(
      expect.objectContaining({ provider: "google", model: "gemini-2.5-pro", inputPerM: 1.5, origin: "override" }),
    );
  });

  it("a file's Ollama agent runs one job at once as the built-in ones do, unless it says how many", async () => {
    const { server } = await serverWithFile(
      "agents:\n  local:\n    provider: ollama/llama3.1\n  wide:\n    provider: ollama/qwen3\n    maxConcurrent: 3\n",
    );
    const agents = await agentsOf(server);
    expect(agents.find((a) => a.name === "ollama")?.maxConcurrent).toBe(1);
    expect(agents.find((a) => a.name === "local")).toMatchObject({ kind: "ollama", maxConcurrent: 1, source: "file" });
    expect(agents.find((a) => a.name === "wide")?.maxConcurrent).toBe(3);
    // Over REST too: the kind's default, not Corral's general 4.
    const made = await api<{ maxConcurrent: number }>(server, "POST", "/api/agents", { name: "rest_ollama", kind: "ollama" });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.maxConcurrent).toBe(1);
    expect(agents.find((a) => a.name === "reviewer")).toBeUndefined();
  });

  it("a budget for a provider Corral does not know is refused at its line; one for the file's own agent's provider is taken", async () => {
    const { server } = await serverWithFile(
      "agents:\n  router:\n    provider: openrouter/qwen/qwen3-coder\nbudgets:\n  - provider: openrouter\n    period: day\n    maxTokens: 10\n  - provider: antropic\n    period: day\n    maxCostUsd: 1\n",
    );
    const status = await statusOf(server);
    expect(status.state).toBe("error");
    expect(status.errors).toEqual([
      expect.objectContaining({
        field: "budgets.1.provider",
        line: 8,
        message: expect.stringMatching(/^no provider "antropic" is known here; use one of .*anthropic/),
      }),
    ]);
  });

  it("follows the file: agents appear, change and go (disabled when they have jobs, deleted when not), through in-place writes and atomic renames", async () => {
    const { server, file } = await serverWithFile(null);
    expect((await statusOf(server)).state).toBe("absent");

    saveAtomically(file, TWO_AGENTS);
    await waitForStatus(server, (s) => s.agents.length === 2, "the two agents");
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "reviewer", prompt: "print 1", workdir: path.join(server.root, "w") });
    expect(launched.status, JSON.stringify(launched.body)).toBe(201);
    await server.services.waits.waitFor([launched.body.id], 20_000);

    writeFileSync(file, TWO_AGENTS.replace("model: gemini-2.5-pro", "model: gemini-2.5-flash").replace("maxConcurrent: 2", "maxConcurrent: 3"));
    await until(
      async () => ((await agentsOf(server)).find((a) => a.name === "scout")?.maxConcurrent === 3 ? true : undefined),
      10_000,
      "scout changed",
    );
    expect((await agentsOf(server)).find((a) => a.name === "reviewer")?.model).toBe("gemini-2.5-flash");

    saveAtomically(file, "agents:\n  helper:\n    provider: opencode\n");
    await waitForStatus(server, (s) => s.agents.join() === "helper", "helper only");
    const agents = await agentsOf(server);
    expect(agents.find((a) => a.name === "helper")).toMatchObject({ kind: "opencode", source: "file" });
    // reviewer ran a job: kept for its history, disabled; scout had none: gone.
    expect(agents.find((a) => a.name === "reviewer")).toMatchObject({ enabled: false, source: "file" });
    expect(agents.find((a) => a.name === "scout")).toBeUndefined();

    saveAtomically(file, TWO_AGENTS);
    await waitForStatus(server, (s) => s.agents.length === 2, "reviewer declared again");
    expect((await agentsOf(server)).find((a) => a.name === "reviewer")?.enabled).toBe(true);
  });

  it("sends the file's state over the WebSocket at subscribe and at each read: a rename over it, a delete, a link, a FIFO, and back", async () => {
    const { server, file } = await serverWithFile(TWO_AGENTS);
    const ws = await WsClient.open(server);
    try {
      // Not sent to a connection that did not ask for it.
      ws.send({ type: "subscribe_jobs" });
      await ws.waitFor("subscribed");
      writeFileSync(file, TWO_AGENTS.replace("maxConcurrent: 2", "maxConcurrent: 3"));
      await waitForStatus(server, (s) => s.loadedAt !== null && s.agents.length === 2, "read again");
      expect(ws.of("config_file")).toEqual([]);

      ws.send({ type: "subscribe_config_file" });
      expect((await ws.waitFor("config_file")).status).toEqual(await statusOf(server));
      // Each step comes over the socket, as GET /api/config then answers.
      const next = async (make: () => void, check: (s: ConfigFileStatus) => boolean, what: string) => {
        const seen = ws.of("config_file").length;
        make();
        const sent = await until(
          () =>
            ws
              .of("config_file")
              .slice(seen)
              .find((m) => check(m.status))?.status,
          10_000,
          what,
        );
        expect(sent, what).toEqual(await statusOf(server));
        expect((await api(server, "GET", "/api/health")).status, what).toBe(200);
      };
      await next(
        () => saveAtomically(file, "agents:\n  helper:\n    provider: opencode\n"),
        (s) => s.agents.join() === "helper",
        "a rename over it",
      );
      await next(
        () => writeFileSync(file, "agents:\n  helper:\n    colour: red\n"),
        (s) => s.state === "error",
        "a bad write",
      );
      await next(
        () => rmSync(file),
        (s) => s.state === "absent",
        "a delete",
      );
      await next(
        () => {
          writeFileSync(`${file}.real`, TWO_AGENTS);
          symlinkSync(`${file}.real`, file);
        },
        (s) => s.state === "error" && /symbolic link/.test(s.errors[0]?.message ?? ""),
        "a link",
      );
      await next(
        () => {
          rmSync(file);
          execFileSync("mkfifo", [file]);
        },
        (s) => s.state === "error" && /not a regular file/.test(s.errors[0]?.message ?? ""),
        "a FIFO",
      );
      // The watch outlived all of it.
      await next(
        () => {
          rmSync(file);
          saveAtomically(file, TWO_AGENTS);
        },
        (s) => s.state === "loaded" && s.agents.length === 2,
        "a good file again",
      );

      ws.send({ type: "unsubscribe_config_file" });
      const seen = ws.of("config_file").length;
      ws.send({ type: "subscribe_jobs" });
      await until(() => (ws.of("subscribed").length >= 2 ? true : undefined), 10_000, "the second subscribed");
      writeFileSync(file, GOOD_ONE_AGENT);
      await waitForStatus(server, (s) => s.agents.join() === "solo", "read again after unsubscribing");
      expect(ws.of("config_file").length).toBe(seen);
    } finally {
      await ws.close();
    }
  });

  it("refuses a bad file at start with its line, column and field, logs it, and starts without its agents", async () => {
    const logs: string[] = [];
    const { server } = await serverWithFile("agents:\n  reviewer:\n    provider: gemini\n    colour: red\n", {}, logs);
    const status = await statusOf(server);
    expect(status.state).toBe("error");
    expect(status.errors).toEqual([{ message: "unknown field colour", field: "agents.reviewer.colour", line: 4, column: 5 }]);
    expect((await agentsOf(server)).find((a) => a.name === "reviewer")).toBeUndefined();
    const logged = logs.map((l) => JSON.parse(l) as { msg: string; errors?: ConfigFileError[] }).find((l) => l.msg.includes("config file refused"));
    expect(logged?.errors).toMatchObject([{ line: 4, field: "agents.reviewer.colour" }]);
    expect(logged?.msg).toContain("line 4, column 5: agents.reviewer.colour: unknown field colour");
  });

  it("refuses a bad change with its line and field and keeps the previous agents", async () => {
    const { server, file } = await serverWithFile(TWO_AGENTS);
    await api(server, "POST", "/api/agents", { name: "mine", kind: "opencode" });
    const bad: [string, Partial<ConfigFileError>][] = [
      ["agents:\n  reviewer: {provider: gemini\n", { field: null, line: 3 }],
      ["agents:\n  reviewer:\n    provider: gemini\n    timeoutS: -5\n", { field: "agents.reviewer.timeoutS", line: 4, column: 15 }],
      ["agents:\n  reviewer:\n    provider: gemini\n    tools: [grep, ssh]\n", { field: "agents.reviewer.tools.1", line: 4, column: 19 }],
      ["agents:\n  reviewer:\n    provider: lisp-machine\n", { field: "agents.reviewer.provider", line: 3, column: 15 }],
      ["agents:\n  ok:\n    provider: gemini\n  mine:\n    provider: gemini\n", { field: "agents.mine", line: 4, column: 3 }],
      ["agents:\n  gemini:\n    provider: gemini\n", { field: "agents.gemini", line: 2, column: 3 }],
      ["budgets:\n  - provider: google\n    period: week\n    maxTokens: 5\n", { field: "budgets.0.period", line: 3, column: 13 }],
      ["agents:\n  reviewer:\n    provider: gemini\n    worktree: please\n", { field: "agents.reviewer.worktree", line: 4, column: 15 }],
      // Hub sessions: each name where it is in the list, as the hub spells a session's name.
      ["agents:\n  reviewer:\n    provider: gemini\n    sessions: [review, -x]\n", { field: "agents.reviewer.sessions.1", line: 4, column: 24 }],
      [
        'agents:\n  reviewer:\n    provider: gemini\n    sessions:\n      - review\n      - "a\\0b"\n',
        { field: "agents.reviewer.sessions.1", line: 6, column: 9 },
      ],
      ["agents:\n  reviewer:\n    provider: gemini\n    sessions: [review, review]\n", { field: "agents.reviewer.sessions.1", line: 4, column: 24 }],
      [
        "agents:\n  reviewer:\n    provider: opencode_server\n    baseUrl: http://127.0.0.1:4096\n    env: {OPENCODE_SESSION_ID: ses_1}\n    sessions: [a, b]\n",
        { field: "agents.reviewer.sessions", line: 6, column: 5 },
      ],
      // Runners need a registry in PostgreSQL.
      ...(registryOnPostgres
        ? []
        : [
            ["agents:\n  reviewer:\n    provider: gemini\n    runnerLabel: gpu\n", { field: "agents.reviewer.runnerLabel", line: 4, column: 18 }] as [
              string,
              Partial<ConfigFileError>,
            ],
          ]),
    ];
    for (const [text, where] of bad) {
      saveAtomically(file, text);
      const status = await waitForStatus(
        server,
        (s) => s.state === "error" && s.errors[0]?.line === where.line && s.errors[0]?.field === where.field,
        `refusal of ${text}`,
      );
      expect(status.errors, text).toMatchObject([where]);
      expect(status.agents).toEqual(["reviewer", "scout"]);
      const agents = await agentsOf(server);
      expect(agents.find((a) => a.name === "reviewer")).toMatchObject({ model: "gemini-2.5-pro", enabled: true, source: "file" });
      expect(agents.find((a) => a.name === "mine")?.source).toBe("registry");
      saveAtomically(file, TWO_AGENTS);
      await waitForStatus(server, (s) => s.state === "loaded", "the good file again");
    }
    expect((await statusOf(server)).errors).toEqual([]);
  });

  it("limits an agent to hub sessions, and reads thousands of them, good or bad, as one error", async () => {
    const { server, file } = await serverWithFile("agents:\n  reviewer:\n    provider: gemini\n    sessions: [review, build-42]\n");
    expect((await statusOf(server)).state).toBe("loaded");
    expect((await agentsOf(server)).find((a) => a.name === "reviewer")?.sessions).toEqual(["review", "build-42"]);
    const workers = async (session: string) =>
      (await api<{ agents: { name: string }[] }>(server, "GET", `/api/conversations/${session}/agents`)).body.agents.map((a) => a.name);
    expect(await workers("build-42")).toContain("reviewer");
    expect(await workers("other")).not.toContain("reviewer");

    // Five thousand names, good or bad: the count is the one error, not five thousand of them.
    for (const name of [(i: number) => `s${i}`, (i: number) => `-${i}`]) {
      saveAtomically(
        file,
        `agents:\n  reviewer:\n    provider: gemini\n    sessions: [${Array.from({ length: 5000 }, (_, i) => name(i)).join(", ")}]\n`,
      );
      const refused = await waitForStatus(server, (s) => s.state === "error", "the refusal of 5000 sessions");
      expect(refused.errors).toEqual([
        expect.objectContaining({ field: "agents.reviewer.sessions", line: 4, message: "name at most 100 sessions, or none for every session" }),
      ]);
      saveAtomically(file, "agents:\n  reviewer:\n    provider: gemini\n    sessions: [review, build-42]\n");
      await waitForStatus(server, (s) => s.state === "loaded", "the good file again");
    }
    expect((await agentsOf(server)).find((a) => a.name === "reviewer")?.sessions).toEqual(["review", "build-42"]);
  });

  it("reports every error of the orchestrator's file at once, each with its line, column, field and fix", async () => {
    const text = [
      "agents:",
      "  coder:",
      "    role: You write code.",
      "    provider: litellm",
      "    model: gemini-1.5-pro",
      "    tools: [read, write, ssh]",
      "  researcher:",
      "    provider: lisp-machine",
      "    colour: red",
      "  writer:",
      "    provider: claude-code",
      "budgets:",
      "  - { provider: openai, period: week, maxCostUsd: 5 }",
      "servers:",
      "  - name: build",
      "    host: build.example.com",
      "",
    ].join("\n");
    const { server } = await serverWithFile(text);
    const status = await statusOf(server);
    expect(status.state).toBe("error");
    const where = status.errors.map((e) => `${e.line}:${e.column} ${e.field}`);
    expect(where.sort()).toEqual(["14:1 servers", "13:33 budgets.0.period", "6:26 agents.coder.tools.2", "9:5 agents.researcher.colour"].sort());
    const about = (field: string) => status.errors.find((e) => e.field === field)?.message ?? "";
    expect(about("servers")).toMatch(/^Corral does not reach servers over ssh; remove servers: .*corral runner.*runnerLabel \(docs\/runners\.md\)$/);
    expect(about("agents.coder.tools.2")).toMatch(/no model an ssh tool.*runnerLabel/);
    // Well-formed agents are checked too, in the same report, once the fields above are fixed.
    const fixed = text
      .replace("ssh]", "grep]")
      .replace("    colour: red\n", "")
      .replace(/servers:[\s\S]*$/, "")
      .replace("week", "day");
    const { server: again } = await serverWithFile(fixed);
    const second = await statusOf(again);
    expect(second.errors.map((e) => `${e.line}:${e.column} ${e.field}`).sort()).toEqual(
      ["5:12 agents.coder.model", "8:15 agents.researcher.provider"].sort(),
    );
    expect(second.errors.find((e) => e.field === "agents.coder.model")?.message).toMatch(
      /^LiteLLM sends a bare gemini-1\.5-pro to Vertex AI, which Corral does not reach; write gemini\/gemini-1\.5-pro for Google AI Studio/,
    );
  });

  it("reads provider litellm with the model as LiteLLM names it, or through a LiteLLM proxy", async () => {
    const text = [
      "agents:",
      "  coder: { provider: litellm, model: gpt-4o, role: You write code., tools: [read, write, list_dir] }",
      "  critic: { provider: litellm, model: claude-sonnet-4-5 }",
      "  scout: { provider: litellm, model: gemini/gemini-2.5-flash }",
      "  router: { provider: litellm, model: openrouter/meta-llama/llama-3-70b }",
      "  proxied: { provider: litellm, model: team-gpt, baseUrl: 'http://127.0.0.1:4000/v1' }",
      "",
    ].join("\n");
    const { server } = await serverWithFile(text);
    const status = await statusOf(server);
    expect(status.errors).toEqual([]);
    const agents = await agentsOf(server);
    const of = (name: string) => agents.find((a) => a.name === name);
    expect(of("coder")).toMatchObject({ kind: "api", api: "openai", provider: "openai", model: "gpt-4o", apiKeyEnv: "OPENAI_API_KEY" });
    expect(of("coder")?.tools).toEqual(["read_file", "write_file", "list_files"]);
    expect(of("critic")).toMatchObject({
      kind: "api",
      api: "anthropic",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      apiKeyEnv: "ANTHROPIC_API_KEY",
    });
    expect(of("scout")).toMatchObject({ kind: "api", api: "google", provider: "google", model: "gemini-2.5-flash", apiKeyEnv: "GEMINI_API_KEY" });
    expect(of("router")).toMatchObject({
      api: "openai",
      provider: "openrouter",
      model: "meta-llama/llama-3-70b",
      baseUrl: "https://openrouter.ai/api/v1",
    });
    expect(of("proxied")).toMatchObject({
      api: "openai",
      provider: "litellm",
      model: "team-gpt",
      baseUrl: "http://127.0.0.1:4000/v1",
      apiKeyEnv: "LITELLM_API_KEY",
    });
  });

  it("gives a claude agent its role and tools, and refuses them, naming the field, on a CLI agent that has no option for them", async () => {
    const text = [
      "agents:",
      "  writer: { provider: claude-code, role: You write docs., tools: [read, write] }",
      "  tester: { provider: gemini, role: You test., tools: [read] }",
      "",
    ].join("\n");
    const { server } = await serverWithFile(text);
    const status = await statusOf(server);
    expect(status.errors.map((e) => `${e.line}:${e.column} ${e.field}`)).toEqual(["3:37 agents.tester.role"]);
    expect(status.errors[0]?.message).toMatch(/^gemini agents take no role: .*GEMINI\.md/);
    const fixed = text.replace("role: You test., tools: [read] ", "");
    const { server: again } = await serverWithFile(fixed);
    expect((await statusOf(again)).errors).toEqual([]);
    expect((await agentsOf(again)).find((a) => a.name === "writer")).toMatchObject({
      kind: "claude",
      role: "You write docs.",
      tools: ["read_file", "write_file"],
    });
  });

  it("says where it looks when a config.yaml sits in the folder Corral started from", () => {
    const root = tempDir();
    dirs.push(root);
    const config: Pick<AppConfig, "configFile" | "configFileNamed"> = { configFile: path.join(root, "data", "corral.yaml"), configFileNamed: false };
    expect(meantFile(config, root)).toBeNull();
    writeFileSync(path.join(root, "config.yaml"), "agents: {}\n");
    expect(meantFile(config, root)).toBe(
      `Corral reads its config file from ${config.configFile} (none there), not ${path.join(root, "config.yaml")}: start it with CORRAL_CONFIG=${path.join(root, "config.yaml")}, or copy the file there`,
    );
    expect(meantFile({ ...config, configFileNamed: true }, root)).toBeNull();
  });

  it("a bad file at a restart keeps the agents the last run loaded", async () => {
    const { server, file } = await serverWithFile(TWO_AGENTS);
    servers.splice(servers.indexOf(server), 1);
    const { root, dataDir } = server;
    await server.close();
    writeFileSync(file, "agents:\n  reviewer: [\n");
    const again = await startServer({}, { root, dataDir });
    servers.push(again);
    const status = await statusOf(again);
    expect(status).toMatchObject({ state: "error", agents: ["reviewer", "scout"], errors: [expect.objectContaining({ line: 3 })] });
    expect((await agentsOf(again)).filter((a) => a.source === "file").map((a) => [a.name, a.enabled])).toEqual([
      ["reviewer", true],
      ["scout", true],
    ]);
  });

  it.skipIf(!postgres.available)("gives a file's agent its runner label on a PostgreSQL registry, and exports it", async () => {
    const { server } = await serverWithFile("agents:\n  trainer:\n    provider: gemini\n    runnerLabel: gpu\n", {
      CORRAL_DATABASE_URL: await postgres.database(),
    });
    expect((await agentsOf(server)).find((a) => a.name === "trainer")).toMatchObject({ runnerLabel: "gpu", source: "file" });
    const exported = await fetch(`${server.url}/api/config/export`, { headers: { authorization: `Bearer ${server.token}` } });
    expect(parse(await exported.text()).agents.trainer).toMatchObject({ provider: "gemini", runnerLabel: "gpu" });
  });

  it("refuses REST edits and deletes of the file's agents, naming the file", async () => {
    const { server, file } = await serverWithFile(TWO_AGENTS);
    for (const [method, body] of [
      ["PATCH", { enabled: false }],
      ["DELETE", undefined],
    ] as const) {
      const refused = await api<ApiError>(server, method, "/api/agents/scout", body);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: "agent_in_config_file", agent: "scout", field: "name" });
      expect(refused.body.error).toContain(file);
    }
    expect((await agentsOf(server)).find((a) => a.name === "scout")?.enabled).toBe(true);
    expect((await api(server, "PATCH", "/api/agents/gemini", { timeoutS: 60 })).status).toBe(200);
  });

  it("exports the agents, budgets and prices as a file that loads back into the same agents, with no keys", async () => {
    const { server } = await serverWithFile(TWO_AGENTS);
    const created = await api(server, "POST", "/api/agents", {
      name: "local_tool",
      kind: "command",
      command: "/bin/echo",
      args: ["{prompt}"],
      env: { SECRET_TOKEN: "hunter2-very-secret" },
      description: "echoes",
      enabled: false,
    });
    expect(created.status).toBe(201);
    await api(server, "POST", "/api/agents", {
      name: "coder",
      kind: "claude",
      model: "claude-sonnet-4-5",
      sandbox: "bwrap",
      retry: null,
      tools: ["grep"],
      sessions: ["review", "build-42"],
    });
    await api(server, "POST", "/api/costs/budgets", { provider: "anthropic", period: "month", maxTokens: 1000 });
    const res = await fetch(`${server.url}/api/config/export`, { headers: server.auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/yaml");
    expect(res.headers.get("content-disposition")).toContain("corral.yaml");
    const text = await res.text();
    expect(text).not.toContain("hunter2");
    expect(text).toContain("SECRET_TOKEN");
    const exported = parse(text) as { agents: Record<string, Record<string, unknown>> };
    expect(exported.agents.coder?.sessions).toEqual(["review", "build-42"]);
    // Every session, the default, is not written.
    expect(exported.agents.local_tool).not.toHaveProperty("sessions");
    expect(Object.keys(exported.agents).sort()).toEqual(["coder", "local_tool", "reviewer", "scout"]);

    const { server: other } = await serverWithFile(text);
    expect((await statusOf(other)).state).toBe("loaded");
    const comparable = (agents: AgentList["agents"]) =>
      agents
        .filter((a) => !a.builtin)
        .map(({ createdAt: _c, updatedAt: _u, availability: _a, source: _s, env: _e, workdir, ...rest }) => ({
          ...rest,
          workdir: path.relative(path.dirname(path.dirname(workdir)), workdir),
        }));
    const before = comparable(await agentsOf(server));
    const after = comparable(await agentsOf(other));
    expect(after).toEqual(before);
    expect((await agentsOf(other)).filter((a) => !a.builtin).every((a) => a.source === "file")).toBe(true);
    const budgets = (await api<{ budgets: { provider: string; maxTokens: number | null }[] }>(other, "GET", "/api/costs/budgets")).body.budgets;
    expect(budgets.map((b) => [b.provider, b.maxTokens])).toEqual(
      expect.arrayContaining([
        ["anthropic", 1000],
        ["google", null],
      ]),
    );
  });

  it("refuses hostile files without harm: huge, deeply nested, alias bombs, too many agents, a link or a FIFO at the path", async () => {
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x]",
      ...["b", "c", "d", "e", "f", "g"].map((k, i) => `${k}: &${k} [${Array(9).fill(`*${"abcdefg"[i]}`).join(", ")}]`),
    ].join("\n");
    const cases: [string, (file: string) => void, RegExp][] = [
      ["huge", (f) => writeFileSync(f, `# ${"x".repeat(2 * 1024 * 1024)}\n`), /at most 1048576/],
      ["nested", (f) => writeFileSync(f, `agents: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`), /nested more than 64 levels/],
      [
        "block-nested",
        (f) => writeFileSync(f, Array.from({ length: 1000 }, (_, i) => `${" ".repeat(i)}k:`).join("\n")),
        /nested more than 64 levels/,
      ],
      ["aliases", (f) => writeFileSync(f, `${bomb}\n`), /too many aliases/],
      [
        "many agents",
        (f) => writeFileSync(f, `agents:\n${Array.from({ length: 600 }, (_, i) => `  a${i}: { provider: gemini }`).join("\n")}\n`),
        /at most 500 agents/,
      ],
      [
        "link",
        (f) => {
          writeFileSync(`${f}.real`, TWO_AGENTS);
          symlinkSync(`${f}.real`, f);
        },
        /symbolic link/,
      ],
      ["fifo", (f) => execFileSync("mkfifo", [f]), /not a regular file/],
    ];
    for (const [name, make, message] of cases) {
      const root = tempDir();
      dirs.push(root);
      const file = path.join(root, "corral.yaml");
      make(file);
      const { server } = await serverWithFile(null, { CORRAL_CONFIG: file });
      const status = await statusOf(server);
      expect(status.state, name).toBe("error");
      expect(status.errors[0]?.message, name).toMatch(message);
      expect((await api(server, "GET", "/api/health")).status).toBe(200);
    }
  });

  it("refuses a CORRAL_CONFIG that does not exist, and loads it once it is written", async () => {
    const root = tempDir();
    dirs.push(root);
    const file = path.join(root, "agents.yaml");
    const { server } = await serverWithFile(null, { CORRAL_CONFIG: file });
    expect((await statusOf(server)).errors[0]?.message).toContain("does not exist");
    saveAtomically(file, TWO_AGENTS);
    await waitForStatus(server, (s) => s.state === "loaded", "the file once written");
  });
});

describe("the orchestrator's provider", () => {
  const kinds = ["gemini", "claude", "opencode", "codex", "kiro", "command", "ollama", "api"];
  const providerOf = (kind: string) => ({ gemini: "google", claude: "anthropic", ollama: "ollama" })[kind] ?? "local";
  const map = (p: string) => mapProvider(p, kinds, providerOf);

  it("maps CLIs to their kind and model APIs to api agents", () => {
    expect(map("gemini")).toMatchObject({ kind: "gemini", provider: "google", api: null, model: null });
    expect(map("claude-code")).toMatchObject({ kind: "claude", provider: "anthropic" });
    expect(map("ollama/llama3.1")).toMatchObject({ kind: "ollama", model: "llama3.1" });
    expect(map("openai/gpt-4o")).toEqual({
      kind: "api",
      provider: "openai",
      model: "gpt-4o",
      api: "openai",
      baseUrl: null,
      apiKeyEnv: "OPENAI_API_KEY",
    });
    expect(map("anthropic")).toMatchObject({ kind: "api", api: "anthropic", model: null, apiKeyEnv: "ANTHROPIC_API_KEY" });
    expect(map("gemini/gemini-2.5-pro")).toMatchObject({ kind: "api", api: "google", provider: "google", apiKeyEnv: "GEMINI_API_KEY" });
    expect(map("openrouter/meta-llama/llama-3-70b")).toMatchObject({
      kind: "api",
      api: "openai",
      model: "meta-llama/llama-3-70b",
      baseUrl: "https://openrouter.ai/api/v1",
      provider: "openrouter",
    });
    expect(() => map("bedrock/titan")).toThrow(/unknown provider bedrock\/titan/);
    expect(() => map("openai/")).toThrow(/name the model/);
    expect(() => mapProvider("openai/gpt-4o", ["gemini"], providerOf)).toThrow(/api agent kind/);
  });
});
