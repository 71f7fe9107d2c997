// Workers get an allowlisted environment (agents/inherited-env.ts, agents/worker-env.ts): the machine's basics, their
// kind's own variables, CORRAL_PASS_ENV and their agent's env; never Corral's settings, never
// another kind's keys. Each worker here is a real process that prints its whole environment.
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { AgentWithAvailability, Job } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadConfig, type AppConfig } from "../src/config.js";
import { startFakeOpenAI } from "./fixtures/fake-llm/openai.js";
import { registryOnPostgres } from "./postgres.js";
import { api, startServer, type TestServer } from "./helpers.js";
import { hasTool } from "./required-tool.js";

const hasBwrap = hasTool(
  "bwrap",
  ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--", "true"],
  "apt-get install bubblewrap",
);

/** The registry owner's password, in the URL the server holds (the SQLite runs keep it in the environment only). */
const DB_PASSWORD = "owner-db-password-7f3a";
const SECRETS = {
  ANTHROPIC_API_KEY: "sk-ant-secret-of-claude",
  OPENAI_API_KEY: "sk-openai-secret-of-codex",
  GEMINI_API_KEY: "gemini-secret-of-gemini",
  SCOUT_KEY: "sk-scout-secret-of-the-api-agent",
  UNRELATED_SERVER_SECRET: "an-unrelated-secret",
};

let server: TestServer;
let config: AppConfig;
let databaseUrl: string;
beforeAll(async () => {
  server = await startServer(
    {
      ...(registryOnPostgres ? {} : { CORRAL_DATABASE_URL: `postgres://owner:${DB_PASSWORD}@127.0.0.1:9/corral` }),
      ...SECRETS,
      HTTPS_PROXY: "http://proxy.example:3128",
      LC_ALL: "C.UTF-8",
      CORRAL_PASS_ENV: "PASSED_ONE,SHARED_*",
      PASSED_ONE: "passed-1",
      SHARED_TWO: "shared-2",
    },
    // SQLite runs: the URL stays in the environment the server was given; the registry is its own file.
    {
      config: (loaded) => {
        config = registryOnPostgres ? loaded : { ...loaded, databaseUrl: null };
        return config;
      },
    },
  );
  databaseUrl = config.databaseUrl ?? `postgres://owner:${DB_PASSWORD}@127.0.0.1:9/corral`;
  // Every kind's CLI here: prints its environment; asked for its version, writes it to a file (versions are remembered per binary: one each).
  for (const name of ["print-env", "probe-env"]) {
    const script = path.join(server.root, `${name}.sh`);
    writeFileSync(
      script,
      `#!/bin/sh\nif [ "$1" = --version ]; then env > "${path.join(server.root, name)}.out"; echo "${name} 1.0"; exit 0; fi\nexec env\n`,
    );
    chmodSync(script, 0o755);
  }
});
afterAll(() => server?.close());

async function agent(fields: Record<string, unknown>): Promise<void> {
  const res = await api(server, "POST", "/api/agents", {
    command: path.join(server.root, "print-env.sh"),
    workdir: path.join(server.root, "w"),
    ...fields,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

/** The worker's environment, as it printed it. */
async function envOf(name: string, body: Record<string, unknown> = {}): Promise<Record<string, string>> {
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent: name, prompt: "print", ...body });
  expect(launched.status, JSON.stringify(launched.body)).toBe(201);
  const [job] = await server.services.waits.waitFor([launched.body.id], 30_000);
  expect(job?.status, job?.error ?? "").toBe("succeeded");
  return parseEnv(server.services.output.outputTail(job!, 1_000_000));
}

function parseEnv(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split("\n")
      .flatMap((line) => (/^[A-Za-z_][A-Za-z0-9_]*=/.test(line) ? [[line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]] : [])),
  );
}

/** What no worker may see: Corral's settings (by name and by value) and every key it was not given. */
function expectNoCorral(env: Record<string, string>): void {
  expect(Object.keys(env).filter((name) => name.startsWith("CORRAL"))).toEqual([]);
  const values = Object.values(env).join("\n");
  expect(values).not.toContain(server.token);
  expect(values).not.toContain(databaseUrl);
  expect(values).not.toContain(DB_PASSWORD);
  expect(env.UNRELATED_SERVER_SECRET).toBeUndefined();
}

function expectBasics(env: Record<string, string>, proxy = "http://proxy.example:3128"): void {
  expect(env.PATH).toBe(config.serverEnv.PATH);
  expect(env.HOME).toBe(server.root);
  expect(env.HTTPS_PROXY).toBe(proxy);
  expect(env.LC_ALL).toBe("C.UTF-8");
  expect(env.PASSED_ONE).toBe("passed-1");
  expect(env.SHARED_TWO).toBe("shared-2");
}

describe("a worker's environment", () => {
  test("a command agent gets the basics, CORRAL_PASS_ENV and its own env: no Corral setting, no agent kind's key", async () => {
    await agent({ name: "plain", kind: "command", env: { MY_OVERRIDE: "mine", HTTPS_PROXY: "http://agent-proxy:1" } });
    const env = await envOf("plain");
    expectNoCorral(env);
    for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "SCOUT_KEY"]) expect(env[key], key).toBeUndefined();
    expect(env.MY_OVERRIDE).toBe("mine");
    // The agent's env wins over the server's.
    expectBasics(env, "http://agent-proxy:1");
  });

  test("a claude worker gets ANTHROPIC_API_KEY and nothing of codex's or gemini's", async () => {
    await agent({ name: "claudish", kind: "claude", env: { CLAUDE_EXTRA: "x" } });
    const env = await envOf("claudish");
    expectNoCorral(env);
    expectBasics(env);
    expect(env.ANTHROPIC_API_KEY).toBe(SECRETS.ANTHROPIC_API_KEY);
    expect(env.CLAUDE_EXTRA).toBe("x");
    expect(env.OPENAI_API_KEY).toBeUndefined();
    expect(env.GEMINI_API_KEY).toBeUndefined();
    expect(env.SCOUT_KEY).toBeUndefined();
  });

  test("an opencode worker gets the key of the provider its model names, no other", async () => {
    await agent({ name: "oc", kind: "opencode" });
    const env = await envOf("oc", { model: "openai/gpt-5" });
    expectNoCorral(env);
    expect(env.OPENAI_API_KEY).toBe(SECRETS.OPENAI_API_KEY);
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(env.GEMINI_API_KEY).toBeUndefined();
  });

  test.skipIf(!hasBwrap)("a sandboxed worker (bwrap) gets the same, through bubblewrap", async () => {
    await agent({ name: "boxedcodex", kind: "codex", sandbox: "bwrap" });
    const env = await envOf("boxedcodex");
    expectNoCorral(env);
    expectBasics(env);
    expect(env.OPENAI_API_KEY).toBe(SECRETS.OPENAI_API_KEY);
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
  });

  test("the --version probe of a listing gets its kind's environment, nothing of Corral's or other kinds'", async () => {
    await agent({ name: "probedgemini", kind: "gemini", command: path.join(server.root, "probe-env.sh"), env: { AGENT_ONLY: "not-for-probes" } });
    const { body } = await api<AgentWithAvailability>(server, "GET", "/api/agents/probedgemini");
    expect(body.availability).toMatchObject({ available: true, version: "probe-env 1.0" });
    const env = parseEnv(readFileSync(path.join(server.root, "probe-env.out"), "utf8"));
    expectNoCorral(env);
    expect(env.GEMINI_API_KEY).toBe(SECRETS.GEMINI_API_KEY);
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(env.AGENT_ONLY).toBeUndefined();
  });

  test.skipIf(!hasBwrap)("an API agent's bash sees no API key at all, its own included, and none of Corral's settings", async () => {
    const fake = await startFakeOpenAI([
      { kind: "tool", name: "bash", args: { command: "env" }, usage: { input: 10, output: 5 } },
      { kind: "text", text: "done", usage: { input: 10, output: 1 } },
    ]);
    try {
      const created = await api(server, "POST", "/api/agents", {
        name: "scout",
        kind: "api",
        api: "openai",
        baseUrl: `${fake.url}/v1`,
        model: "m",
        apiKeyEnv: "SCOUT_KEY",
        tools: ["bash"],
        workdir: path.join(server.root, "w"),
        env: { AGENT_VAR: "agent-var" },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "scout", prompt: "env" });
      const [job] = await server.services.waits.waitFor([launched.body.id], 30_000);
      expect(job?.status, job?.error ?? "").toBe("succeeded");
      // The model's request carried the key: the server read it from its own environment.
      expect(fake.requests.find((r) => r.path.endsWith("/chat/completions"))?.headers.authorization).toBe(`Bearer ${SECRETS.SCOUT_KEY}`);
      const last = fake.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)?.body as {
        messages: { role: string; content: string }[];
      };
      const env = parseEnv(last.messages.find((m) => m.role === "tool")?.content ?? "");
      expect(env.PATH).toBeDefined();
      expect(env.AGENT_VAR).toBe("agent-var");
      expectNoCorral(env);
      for (const [name, value] of Object.entries(SECRETS)) {
        expect(env[name], name).toBeUndefined();
        expect(Object.values(env)).not.toContain(value);
      }
    } finally {
      await fake.close();
    }
  });
});

describe("naming Corral's settings for a worker is refused", () => {
  test("an agent's env with CORRAL_TOKEN: 400 naming env.CORRAL_TOKEN, even with CORRAL_ALLOW_LOADER_ENV", async () => {
    const res = await api<{ field: string; error: string }>(server, "POST", "/api/agents", {
      name: "sneaky",
      kind: "command",
      command: "/bin/true",
      env: { CORRAL_TOKEN: "x" },
    });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe("env.CORRAL_TOKEN");
    expect(res.body.error).toMatch(/Corral's own settings/);
    const patched = await api<{ field: string }>(server, "PATCH", "/api/agents/plain", { env: { CORRAL_DATABASE_URL: "x" } });
    expect(patched.status).toBe(400);
    expect(patched.body.field).toBe("env.CORRAL_DATABASE_URL");
  });

  test("an API agent's apiKeyEnv may not be one of Corral's settings", async () => {
    const res = await api<{ field: string }>(server, "POST", "/api/agents", {
      name: "keyed",
      kind: "api",
      api: "openai",
      model: "m",
      apiKeyEnv: "CORRAL_TOKEN",
    });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe("apiKeyEnv");
  });

  test("CORRAL_PASS_ENV refuses CORRAL_ names and anything that is not a name or a prefix", () => {
    expect(() => loadConfig({ CORRAL_PASS_ENV: "HTTP_PROXY,CORRAL_TOKEN" })).toThrow(/CORRAL_PASS_ENV.*Corral's own settings are never passed/s);
    expect(() => loadConfig({ CORRAL_PASS_ENV: "*" })).toThrow(/CORRAL_PASS_ENV.*variable names, or prefixes ending in \*/s);
    expect(loadConfig({ CORRAL_PASS_ENV: "AWS_*, SSH_AUTH_SOCK" }).passEnv).toEqual(["AWS_*", "SSH_AUTH_SOCK"]);
  });
});
