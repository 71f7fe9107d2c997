// Attacks on the config file's one-report errors, provider litellm, and a claude agent's role and
// tools (79e88bf, 9a32584, 8a24e4c), each from the principal that controls the input: whoever writes
// the config file, a REST client with the token, and the panel's form.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { AgentKindList, AgentWithAvailability, ApiError, ConfigFileStatus, Job } from "@corral/shared";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { formFromAgent, updateBody } from "../../web/src/lib/domain/agent-form.js";
import { parseConfigText } from "../src/config-file/parse.js";
import { mapProvider, ProviderError } from "../src/config-file/providers.js";
import { ConfigFileRefusal } from "../src/config-file/read.js";
import type { Registry } from "../src/db/registry.js";
import { api, startServer, tempDir, type TestServer, until } from "./helpers.js";

const timed = <T>(run: () => T): { value: T; ms: number } => {
  const start = performance.now();
  const value = run();
  return { value, ms: performance.now() - start };
};

/** The report of a file's text, as the service makes it: parseConfigText's refusal, or its errors refused. */
function reportOf(text: string) {
  try {
    return new ConfigFileRefusal(parseConfigText(text).errors).errors;
  } catch (err) {
    if (err instanceof ConfigFileRefusal) return err.errors;
    throw err;
  }
}

describe("the config file's author", () => {
  test("a file of 40,000 unknown keys is reported in linear time: neither the key check nor the errors' places compare every key with every other", () => {
    // ~400 KB, under the 1 MiB cap. Both steps were quadratic (the parser's uniqueKeys, offsetOf's find per error):
    // 51 s for this file; at the cap's ~130,000 keys, minutes of a blocked event loop on every save.
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i.toString(36)}: 1`);
    reportOf(keys(5_000).join("\n"));
    const small = timed(() => reportOf(keys(10_000).join("\n")));
    const big = timed(() => reportOf(keys(40_000).join("\n")));
    expect(big.value).toHaveLength(50);
    expect(big.value[0]).toMatchObject({ field: "k0", line: 1, column: 1, message: "unknown field k0" });
    // Four times the keys: about four times the time when linear, sixteen when quadratic.
    expect(big.ms / small.ms, `${small.ms} ms, then ${big.ms} ms`).toBeLessThan(8);
    expect(big.ms).toBeLessThan(15_000);
    const inAgent = reportOf(
      `agents:\n  a:\n    provider: gemini\n${keys(40_000)
        .map((k) => `    ${k}`)
        .join("\n")}\n`,
    );
    expect(inAgent[0]).toMatchObject({ field: "agents.a.k0", line: 4 });
    // Keys are still unique, and a repeated one is refused where it is.
    expect(reportOf("agents:\n  a:\n    provider: gemini\n    provider: claude\n")).toEqual([
      { message: "Map keys must be unique", field: null, line: 4, column: 5 },
    ]);
  });

  test("a map of long unknown keys merged into every agent neither gathers millions of errors nor builds a message of hundreds of MB", () => {
    // 1 MB of file; unbounded, 99 merges of 100 keys of 10,000 characters were 198 million characters of errors, and
    // 50,000 short keys merged 99 times held the event loop 100 s and took 2.7 GB of heap.
    const keys = Array.from({ length: 100 }, (_, i) => `      ? ${"k".repeat(9900)}${i}\n      : 1`).join("\n");
    const agents = Array.from({ length: 99 }, (_, i) => `  a${i}:\n    provider: gemini\n    <<: *m`).join("\n");
    const text = `agents:\n  base:\n    provider: gemini\n    <<: &m\n${keys}\n${agents}\n`;
    const { value: declared, ms } = timed(() => parseConfigText(text));
    expect(declared.errors.length).toBeLessThanOrEqual(1000);
    const refusal = new ConfigFileRefusal(declared.errors);
    expect(refusal.errors).toHaveLength(50);
    for (const e of refusal.errors) expect(e.message.length + (e.field?.length ?? 0)).toBeLessThanOrEqual(2002);
    expect(refusal.message.length).toBeLessThan(200_000);
    expect(ms).toBeLessThan(3000);
  });

  test("a map of 50,000 keys merged into 99 agents (0.7 MB) is refused before it is expanded, not 5 million properties and errors", () => {
    // Unbounded: 100 s of a blocked event loop and 2.7 GB of heap; bounded errors alone still left 17 s and 720 MB of expansion.
    const keys = Array.from({ length: 50_000 }, (_, i) => `      k${i.toString(36)}: 1`).join("\n");
    const agents = Array.from({ length: 99 }, (_, i) => `  a${i}:\n    provider: gemini\n    <<: *m`).join("\n");
    const { value: report, ms } = timed(() => reportOf(`agents:\n  base:\n    provider: gemini\n    <<: &m\n${keys}\n${agents}\n`));
    expect(report).toEqual([{ message: expect.stringMatching(/an alias of a value of more than 1000 nodes/), field: null, line: 50007, column: 9 }]);
    expect(ms).toBeLessThan(5000);
    // Sharing a few fields still works.
    const shared = "agents:\n  a:\n    <<: &d { provider: gemini, timeoutS: 60 }\n  b:\n    <<: *d\n";
    expect(parseConfigText(shared).errors).toEqual([]);
  });

  test("a top-level constructor: (or toString:) is an unknown field, and GET /api/config still answers", async () => {
    const root = tempDir();
    const dataDir = path.join(root, "data");
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path.join(dataDir, "corral.yaml"), "constructor: 1\ntoString: 2\nagents:\n  a:\n    provider: gemini\n");
    const server = await startServer({}, { root, dataDir });
    try {
      const status = await api<ConfigFileStatus>(server, "GET", "/api/config");
      expect(status.status, JSON.stringify(status.body)).toBe(200);
      expect(status.body.errors).toEqual([
        { message: "unknown field constructor", field: "constructor", line: 1, column: 1 },
        { message: "unknown field toString", field: "toString", line: 2, column: 1 },
      ]);
    } finally {
      await server.close();
    }
  });

  test("provider constructor/x, __proto__/x and a litellm model toString/x are unknown providers, not Object.prototype's", () => {
    const kinds = ["gemini", "claude", "api", "ollama"];
    for (const provider of ["constructor/x", "__proto__/x"]) {
      expect(() => mapProvider(provider, kinds, () => "p"), provider).toThrow(/unknown provider/);
    }
    for (const model of ["constructor/x", "__proto__/x", "toString/x"]) {
      let thrown: unknown;
      try {
        mapProvider("litellm", kinds, () => "p", { model, baseUrl: null });
      } catch (err) {
        thrown = err;
      }
      expect(thrown, model).toBeInstanceOf(ProviderError);
      expect((thrown as ProviderError).message).toMatch(/LiteLLM would send/);
    }
  });
});

describe("a claude agent's role and tools, over REST and from the panel", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());
  afterEach(async () => {
    await api(server, "PATCH", "/api/agents/claude", { role: null, tools: null });
  });

  const workdir = (name: string) => {
    const dir = path.join(server.root, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  async function run(agent: string): Promise<Job> {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent, prompt: "hi", workdir: workdir("jobs") });
    expect(launched.status, JSON.stringify(launched.body)).toBe(201);
    return until(async () => {
      const job = (await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`)).body;
      return ["succeeded", "failed", "cancelled"].includes(job.status) ? job : undefined;
    });
  }

  test("tools: [] gives Claude Code no built-in tools (--tools=), as it gives an api agent none; not its whole default set, Bash included", async () => {
    expect((await api(server, "PATCH", "/api/agents/claude", { tools: [] })).status).toBe(200);
    const job = await run("claude");
    expect(job.invocation?.args).toContain("--tools=");
    // Unset is the default set: no --tools at all.
    expect((await api(server, "PATCH", "/api/agents/claude", { tools: null })).status).toBe(200);
    expect((await run("claude")).invocation?.args.some((a) => a.startsWith("--tools"))).toBe(false);
  });

  test("the panel's edit of a claude agent confined to list_files keeps it (the checklist offers glob), rather than sending tools: []", async () => {
    expect((await api(server, "PATCH", "/api/agents/claude", { tools: ["list_files"] })).status).toBe(200);
    const agent = (await api<AgentWithAvailability>(server, "GET", "/api/agents/claude")).body;
    const kind = (await api<AgentKindList>(server, "GET", "/api/agent-kinds")).body.kinds.find((k) => k.kind === "claude");
    if (!kind) throw new Error("no claude kind");
    const edit = updateBody({ ...formFromAgent(agent, kind), description: "edited" }, kind);
    if ("field" in edit) throw new Error(edit.message);
    expect(edit.body.tools).toEqual(["list_files"]);
  });

  test("a role or an argument with a NUL byte is refused naming the field (no program takes one, PostgreSQL stores none), rather than every job failing at spawn", async () => {
    const role = await api<ApiError>(server, "PATCH", "/api/agents/claude", { role: "You review.\u0000--tools=Bash" });
    expect(role.status, JSON.stringify(role.body)).toBe(400);
    expect(role.body).toMatchObject({ field: "role" });
    expect(role.body.error).toMatch(/role holds a NUL byte/);
    const args = await api<ApiError>(server, "POST", "/api/agents", { name: "nul_args", kind: "command", command: "/bin/echo", args: ["a\u0000b"] });
    expect(args.status).toBe(400);
    expect(args.body.field).toBe("args");
    // The agent kept what it had: its jobs still run.
    expect((await api<{ role: string | null }>(server, "GET", "/api/agents/claude")).body.role ?? "").not.toContain("\u0000");
  });

  test("a role over Linux's 128 KiB per argument (100,000 characters of €) is refused naming the agent's settings, not the 2-byte prompt", async () => {
    expect((await api(server, "PATCH", "/api/agents/claude", { role: "€".repeat(100_000) })).status).toBe(200);
    const launched = await api<ApiError>(server, "POST", "/api/jobs", { agent: "claude", prompt: "hi", workdir: workdir("long") });
    expect(launched.status).toBe(400);
    expect(launched.body.error).toMatch(/agent claude cannot be run: one of its arguments would be 300\d+ bytes.*shorten its settings/);
    expect(launched.body.error).not.toMatch(/shorten the prompt/);
  });

  test("held: a role starting with '-' and holding newlines stays one argument glued to --append-system-prompt=", async () => {
    const role = "--dangerously-skip-permissions\n--tools=Bash\n-- x";
    expect((await api(server, "PATCH", "/api/agents/claude", { role })).status).toBe(200);
    const job = await run("claude");
    expect(job.status).toBe("succeeded");
    expect(job.invocation?.args).toContain(`--append-system-prompt=${role}`);
    expect(job.invocation?.args).not.toContain("--dangerously-skip-permissions");
  });

  test("held: a gemini agent stored with role and tools before the check runs, and the panel's edit of it (no role, no tools sent) is taken", async () => {
    const registry = (server.services.agents as unknown as { deps: { registry: Registry } }).deps.registry;
    await registry.agents.update("gemini", { role: "old", tools: ["read_file"], maxSteps: 5 });
    const agent = (await api<AgentWithAvailability>(server, "GET", "/api/agents/gemini")).body;
    const kind = (await api<AgentKindList>(server, "GET", "/api/agent-kinds")).body.kinds.find((k) => k.kind === "gemini");
    if (!kind) throw new Error("no gemini kind");
    const edit = updateBody({ ...formFromAgent(agent, kind), description: "edited" }, kind);
    if ("field" in edit) throw new Error(edit.message);
    expect(Object.keys(edit.body)).not.toEqual(expect.arrayContaining(["role"]));
    expect((await api(server, "PATCH", "/api/agents/gemini", edit.body)).status).toBe(200);
    expect((await run("gemini")).status).toBe("succeeded");
    // Clearing them is an edit that sets nothing unapplied.
    expect((await api(server, "PATCH", "/api/agents/gemini", { role: null, tools: null, maxSteps: null })).status).toBe(200);
  });
});

describe("the config file's litellm model, loaded", () => {
  test("provider litellm with model openai/-rf is refused at agents.x.model: the stored model could not start with '-' from any other door", async () => {
    const root = tempDir();
    const dataDir = path.join(root, "data");
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(
      path.join(dataDir, "corral.yaml"),
      "agents:\n  lite:\n    provider: litellm\n    model: openai/-rf\n  raw:\n    provider: openai/-x\n",
    );
    const server = await startServer({}, { root, dataDir });
    try {
      const status = (await api<ConfigFileStatus>(server, "GET", "/api/config")).body;
      expect(status.state).toBe("error");
      expect(status.errors.map((e) => e.field)).toEqual(["agents.lite.model", "agents.raw.provider"]);
      expect(status.errors[0]?.message).toMatch(/cannot start with '-'/);
    } finally {
      await server.close();
    }
  });
});
