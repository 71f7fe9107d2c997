import { mkdirSync } from "node:fs";
import path from "node:path";
import { type AgentKindDescriptor, AgentKindListSchema, type AgentWithAvailability, type ApiError } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { type AgentFormState, createBody, formFromAgent, newAgentForm, updateBody, withPreset } from "../../web/src/lib/domain/agent-form.js";
import { agentKindNames } from "../src/agents/kind-lookup.js";
import { api, startServer, type TestServer } from "./helpers.js";
import { registryOnPostgres } from "./postgres.js";

// The one registry line: the list of kinds, with the test's fake kind added.
vi.mock("../src/agents/kinds/index.js", async (importOriginal) => {
  const { agentKindModules } = await importOriginal<typeof import("../src/agents/kinds/index.js")>();
  const { parrot } = await import("./fixtures/parrot/kind.js");
  return { agentKindModules: [...agentKindModules, parrot] };
});

/** A key in the server's environment, as an API agent's key variable names it. */
const SECRET = "sk-kinds-test-0123456789abcdef";

let server: TestServer;
let kinds: AgentKindDescriptor[];
beforeAll(async () => {
  server = await startServer({ KINDS_TEST_KEY: SECRET });
  const listed = await api(server, "GET", "/api/agent-kinds");
  expect(listed.status).toBe(200);
  kinds = AgentKindListSchema.parse(listed.body).kinds;
});
afterAll(() => server.close());

const kind = (name: string) => {
  const found = kinds.find((k) => k.kind === name);
  if (!found) throw new Error(`no kind ${name} in GET /api/agent-kinds`);
  return found;
};
const workdir = (name: string) => {
  const dir = path.join(server.root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};
const getAgent = async (name: string) => (await api<AgentWithAvailability>(server, "GET", `/api/agents/${name}`)).body;

/** What an agent's settings are, without what the server derives or stamps. */
function settings(agent: AgentWithAvailability) {
  const { availability: _a, updatedAt: _u, effectiveModel: _e, ...rest } = agent;
  return rest;
}

describe("agent kinds describe their agents' fields", () => {
  test("GET /api/agent-kinds lists every kind of the registry, a kind added with one module too, each with the fields every agent has", () => {
    expect(kinds.map((k) => k.kind)).toEqual(agentKindNames());
    expect(kind("parrot").fields.find((f) => f.name === "command")).toMatchObject({ label: "Binary override", required: null });
    for (const k of kinds) {
      const names = k.fields.map((f) => f.name);
      expect(names.slice(0, 1), k.kind).toEqual(["name"]);
      expect(names, k.kind).toEqual(expect.arrayContaining(["workdir", "model", "timeoutS", "maxConcurrent", "env", "description"]));
      expect(new Set(names).size, k.kind).toBe(names.length);
    }
    expect(kind("command").adding).toMatchObject({ title: "Add a command agent", primary: true });
    expect(kind("api").fields.find((f) => f.name === "apiKeyEnv")).toMatchObject({ secret: true, label: "Key variable" });
    expect(kinds.filter((k) => k.ollamaModels).map((k) => k.kind)).toEqual(["ollama"]);
    // Runners need the registry in PostgreSQL: a SQLite server's forms offer no runner label it would refuse.
    for (const k of kinds)
      expect(
        k.fields.some((f) => f.name === "runnerLabel"),
        k.kind,
      ).toBe(registryOnPostgres);
  });

  test("a field a kind declares required is refused when missing, on create and on edit, with the kind's words", async () => {
    const executable = kind("command").fields.find((f) => f.name === "command");
    expect(executable?.required).toBe("a command agent needs the executable to run");
    const missing = await api<ApiError>(server, "POST", "/api/agents", { name: "no_exe", kind: "command", workdir: workdir("no-exe") });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ field: "command", issues: [{ field: "command", message: executable?.required }] });

    expect((await api(server, "POST", "/api/agents", { name: "has_exe", kind: "command", command: "echo", workdir: workdir("exe") })).status).toBe(
      201,
    );
    const cleared = await api<ApiError>(server, "PATCH", "/api/agents/has_exe", { command: null });
    expect(cleared.status).toBe(400);
    expect(cleared.body.field).toBe("command");
    // A change that leaves the field alone keeps it, so it is not refused.
    expect((await api(server, "PATCH", "/api/agents/has_exe", { description: "still echoes" })).status).toBe(200);
  });

  test("role and tools are refused, naming the field, on a kind that would store them and never apply them; claude applies them", async () => {
    const refused = await api<ApiError>(server, "POST", "/api/agents", {
      name: "confined_gemini",
      kind: "gemini",
      tools: ["read_file"],
      workdir: workdir("confined"),
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ field: "tools", issues: [{ field: "tools" }] });
    expect(refused.body.error).toMatch(/gemini agents take no tools: its CLI has no option Corral can choose its tools with/);
    const role = await api<ApiError>(server, "PATCH", "/api/agents/codex", { role: "You review." });
    expect(role.status).toBe(400);
    expect(role.body.field).toBe("role");
    expect((await api<ApiError>(server, "PATCH", "/api/agents/opencode", { maxSteps: 5 })).body.field).toBe("maxSteps");
    // Claude Code has options for both; the kind lists them, so the panel's form shows them.
    expect(kind("claude").fields.map((f) => f.name)).toEqual(expect.arrayContaining(["role", "tools"]));
    expect(kind("gemini").fields.map((f) => f.name)).not.toContain("tools");
    const claude = await api(server, "PATCH", "/api/agents/claude", { role: "You review.", tools: ["read_file", "grep"] });
    expect(claude.status, JSON.stringify(claude.body)).toBe(200);
    expect(await getAgent("claude")).toMatchObject({ role: "You review.", tools: ["read_file", "grep"] });
    expect((await api(server, "PATCH", "/api/agents/claude", { role: null, tools: null })).status).toBe(200);
  });

  test("the panel's forms, built from the descriptions, add an agent of each kind offered and save an edit without changing it", async () => {
    const offered = kinds.filter((k) => k.adding);
    expect(offered.map((k) => k.kind).sort()).toEqual(["acp", "api", "command"]);
    for (const k of offered) {
      const name = `form_${k.kind}`;
      const form: AgentFormState = { ...newAgentForm(k), name, workdir: workdir(name), model: "m-1", description: "from the form", env: "A=1" };
      // Each required field gets a value; a select already has one.
      for (const f of k.fields) if (f.required && !form[f.name]) form[f.name] = "echo";
      const created = createBody(form, k);
      if ("field" in created) throw new Error(`${k.kind}: ${created.field}: ${created.message}`);
      const res = await api<AgentWithAvailability>(server, "POST", "/api/agents", created.body);
      expect(res.status, `${k.kind}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(res.body).toMatchObject({ name, kind: k.kind, model: "m-1", description: "from the form", env: { A: "1" } });
    }
    expect(await getAgent("form_command")).toMatchObject({ command: "echo", args: ["{prompt}"] });
    expect(await getAgent("form_acp")).toMatchObject({ command: "echo", args: null, permissions: "workdir" });
    // Each ACP preset's values, put in the form, add an agent that starts that program in its ACP mode.
    const acp = offered.find((k) => k.kind === "acp");
    expect(acp?.adding?.presets.map((p) => p.values.command)).toEqual(["opencode", "gemini", "claude-agent-acp", "codex-acp", "copilot"]);
    for (const preset of acp?.adding?.presets ?? []) {
      const created = createBody(
        withPreset({ ...newAgentForm(acp as AgentKindDescriptor), workdir: workdir("presets") }, acp as AgentKindDescriptor, preset.values),
        acp as AgentKindDescriptor,
      );
      if ("field" in created) throw new Error(`${preset.label}: ${created.field}: ${created.message}`);
      expect((await api(server, "POST", "/api/agents", created.body)).status, preset.label).toBe(201);
    }
    expect(await getAgent("opencode_acp")).toMatchObject({ command: "opencode", args: ["acp"] });
    expect(await getAgent("copilot_acp")).toMatchObject({ command: "copilot", args: ["--acp", "--stdio"] });
    expect(await getAgent("form_api")).toMatchObject({ api: "openai", tools: ["read_file", "write_file", "list_files", "glob", "grep"] });

    expect((await api(server, "POST", "/api/agents", { name: "live", kind: "opencode_server", baseUrl: "http://127.0.0.1:1" })).status).toBe(201);
    const agents = (await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents")).body.agents;
    for (const k of kinds) {
      const agent = agents.find((a) => a.kind === k.kind);
      expect(agent, `an agent of ${k.kind}`).toBeDefined();
      if (!agent) continue;
      const edit = updateBody(formFromAgent(agent, k), k);
      if ("field" in edit) throw new Error(`${agent.name}: ${edit.field}: ${edit.message}`);
      const saved = await api<AgentWithAvailability>(server, "PATCH", `/api/agents/${agent.name}`, edit.body);
      expect(saved.status, `${agent.name}: ${JSON.stringify(saved.body)}`).toBe(200);
      expect(settings(saved.body), agent.name).toEqual(settings(agent));
    }
  });

  test("a secret's field holds only the variable's name: the key itself is never stored, answered or exported", async () => {
    const created = await api<AgentWithAvailability>(server, "POST", "/api/agents", {
      name: "keyed",
      kind: "api",
      api: "openai",
      baseUrl: "http://127.0.0.1:1/v1",
      model: "m",
      apiKeyEnv: "KINDS_TEST_KEY",
    });
    expect(created.status).toBe(201);
    expect(created.body.apiKeyEnv).toBe("KINDS_TEST_KEY");
    const secretFields = kinds.flatMap((k) => k.fields.filter((f) => f.secret).map((f) => f.name));
    expect(secretFields.length).toBeGreaterThan(0);
    for (const url of ["/api/agents", "/api/agents/keyed", "/api/agent-kinds", "/api/config/export"]) {
      const res = await fetch(`${server.url}${url}`, { headers: server.auth });
      expect(res.status, url).toBe(200);
      expect(await res.text(), url).not.toContain(SECRET);
    }
    const stored = await server.services.agents.row("keyed");
    expect(JSON.stringify(stored)).not.toContain(SECRET);
  });
});
