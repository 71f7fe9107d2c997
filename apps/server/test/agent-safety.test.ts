// What an agent's definition and a launch may carry: models that cannot pass for command-line
// options, and no loader variables (LD_PRELOAD, NODE_OPTIONS, BASH_ENV…) in an agent's env
// unless the server allows them — refused on every door, and at job start for agents stored
// before; listing agents never runs code the agent's env chose.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { isFinalStatus, type AgentWithAvailability, type Job } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { connectMcp, textOf } from "./mcp-client.js";
import { api, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { hasTool } from "./required-tool.js";

const hasGit = hasTool("git", ["--version"], "apt-get install git");

const badModels = ["--version", "-m", "-", "a\nb", "gpt\u0000x", "tab\there", "bell\u007f"];

/** A bash script that notes each run, and a BASH_ENV file that notes each time bash sourced it. */
function loaderTrap(dir: string) {
  const runs = path.join(dir, "ran");
  const sourced = path.join(dir, "bash-env-sourced");
  const hook = path.join(dir, "hook.sh");
  writeFileSync(hook, `echo sourced >> '${sourced}'\n`);
  const cli = path.join(dir, "cli.sh");
  writeFileSync(cli, `#!/bin/bash\necho run >> '${runs}'\necho '1.2.3'\n`);
  chmodSync(cli, 0o755);
  return { cli, hook, ran: () => existsSync(runs), sourced: () => existsSync(sourced) };
}

async function finished(server: TestServer, id: string): Promise<Job> {
  return until(async () => {
    const { body } = await api<Job>(server, "GET", `/api/jobs/${id}`);
    return isFinalStatus(body.status) ? body : undefined;
  });
}

describe("with default settings", () => {
  let server: TestServer;
  let mcp: Client;
  beforeAll(async () => {
    server = await startServer();
    mcp = await connectMcp(server);
  });
  afterAll(async () => {
    await mcp.close();
    await server.close();
  });

  test.each(badModels)("a launch with model %j is refused, naming model (REST and MCP)", async (model) => {
    const rest = await api<{ error: string; field: string }>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "x", model });
    expect(rest.status).toBe(400);
    expect(rest.body.field).toBe("model");
    const tool = await mcp.callTool({ name: "gemini_run_async", arguments: { prompt: "x", model } });
    expect(tool.isError).toBe(true);
    expect(textOf(tool)).toMatch(/model/);
    expect((await api<{ total: number }>(server, "GET", "/api/jobs")).body.total).toBe(0);
  });

  test.each(badModels)("an agent with model %j is refused, naming model (create and patch)", async (model) => {
    const created = await api<{ field: string }>(server, "POST", "/api/agents", { name: "modelled", kind: "codex", model });
    expect(created.status).toBe(400);
    expect(created.body.field).toBe("model");
    const patched = await api<{ field: string }>(server, "PATCH", "/api/agents/codex", { model });
    expect(patched.status).toBe(400);
    expect(patched.body.field).toBe("model");
    expect((await api<{ model: string | null }>(server, "GET", "/api/agents/codex")).body.model).toBeNull();
  });

  test("model names as providers spell them are taken", async () => {
    for (const model of ["gpt-5.5", "opencode/deepseek-v4-flash-free", "aliafshar/gemma3-it-qat-tools:4b", "claude-sonnet-4-5[1m]"]) {
      expect((await api(server, "PATCH", "/api/agents/codex", { model })).status).toBe(200);
    }
    expect((await api(server, "PATCH", "/api/agents/codex", { model: null })).status).toBe(200);
  });

  const loaderVars = [
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "NODE_OPTIONS",
    "BASH_ENV",
    "ENV",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "GCONV_PATH",
    // git: settings from the environment (core.fsmonitor, core.sshCommand…) and the programs it starts.
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_0",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_EXTERNAL_DIFF",
    "GIT_EDITOR",
    "EDITOR",
    "VISUAL",
    "PAGER",
    // Where dotfiles that run code are read from.
    "HOME",
    "XDG_CONFIG_HOME",
    "ZDOTDIR",
    "PROMPT_COMMAND",
    // Python's user site (.pth files run), warning categories (imported), breakpoint hook.
    "PYTHONUSERBASE",
    "PYTHONWARNINGS",
    "PYTHONBREAKPOINT",
    // npm's settings in either case: script-shell, node-options, another .npmrc.
    "npm_config_script_shell",
    "NPM_CONFIG_NODE_OPTIONS",
    "npm_config_userconfig",
    "LESSOPEN",
    "BROWSER",
  ];

  test.each(loaderVars)("an agent's env may not set %s (create and patch), naming env.<NAME>", async (name) => {
    const created = await api<{ error: string; field: string; issues: { field: string }[] }>(server, "POST", "/api/agents", {
      name: "loaded",
      kind: "command",
      command: "/bin/true",
      env: { API_KEY: "k", [name]: "/tmp/x" },
    });
    expect(created.status).toBe(400);
    expect(created.body.field).toBe(`env.${name}`);
    expect(created.body.error).toContain("CORRAL_ALLOW_LOADER_ENV=1");
    expect(created.body.issues.map((i) => i.field)).toEqual([`env.${name}`]);
    const patched = await api<{ field: string }>(server, "PATCH", "/api/agents/gemini", { env: { [name]: "/tmp/x" } });
    expect(patched.status).toBe(400);
    expect(patched.body.field).toBe(`env.${name}`);
    expect((await api<{ env: Record<string, string> }>(server, "GET", "/api/agents/gemini")).body.env).toEqual({});
  });

  test("ordinary variables (API keys, base URLs, PATH) are fine", async () => {
    const env = {
      OPENAI_API_KEY: "k",
      GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:1",
      PATH: "/usr/bin:/bin",
      LDAP_URI: "ldap://x",
      NODE_ENV: "production",
      // A commit's identity and a registry token are settings, not code.
      GIT_AUTHOR_NAME: "Worker",
      GIT_COMMITTER_EMAIL: "worker@example.com",
      NPM_TOKEN: "t",
      SHELL: "/bin/bash",
    };
    expect((await api(server, "PATCH", "/api/agents/gemini", { env })).status).toBe(200);
    expect((await api(server, "PATCH", "/api/agents/gemini", { env: {} })).status).toBe(200);
  });

  test("the --version probe of GET /api/agents runs with the server's environment, not the agent's env", async () => {
    const dir = tempDir("corral-probe-");
    try {
      const mark = path.join(dir, "mark");
      const cli = path.join(dir, "probed.sh");
      writeFileSync(cli, `#!/bin/sh\necho "\${PROBE_MARK:-server}" > '${mark}'\necho 'probed 1.0'\n`);
      chmodSync(cli, 0o755);
      expect((await api(server, "POST", "/api/agents", { name: "probed", kind: "claude", command: cli, env: { PROBE_MARK: "agent" } })).status).toBe(
        201,
      );
      const { body } = await api<AgentWithAvailability>(server, "GET", "/api/agents/probed");
      expect(body.availability).toMatchObject({ available: true, version: "probed 1.0" });
      expect(readFileSync(mark, "utf8")).toBe("server\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("agents stored with a loader variable", () => {
  const root = tempDir();
  const dataDir = path.join(root, "data");
  const trap = loaderTrap(root);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("CORRAL_ALLOW_LOADER_ENV=1 allows them; listing still never sources them, a job does", async () => {
    const server = await startServer({ CORRAL_ALLOW_LOADER_ENV: "1" }, { root, dataDir });
    try {
      const created = await api(server, "POST", "/api/agents", { name: "loaded", kind: "claude", command: trap.cli, env: { BASH_ENV: trap.hook } });
      expect(created.status).toBe(201);
      const listed = await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents");
      expect(listed.body.agents.find((a) => a.name === "loaded")?.availability).toMatchObject({ available: true, version: "1.2.3" });
      expect(trap.ran()).toBe(true);
      expect(trap.sourced()).toBe(false);
      const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "loaded", prompt: "x", workdir: path.join(root, "w1") });
      expect((await finished(server, launched.body.id)).status).toBe("succeeded");
      expect(trap.sourced()).toBe(true);
    } finally {
      await server.close();
    }
  });

  test("without the setting such an agent is unavailable and its jobs fail with why, never running", async () => {
    rmSync(path.join(root, "ran"));
    rmSync(path.join(root, "bash-env-sourced"));
    const server = await startServer({}, { root, dataDir });
    try {
      const { body } = await api<AgentWithAvailability>(server, "GET", "/api/agents/loaded");
      expect(body.availability.available).toBe(false);
      expect(body.availability.hint).toMatch(/^env\.BASH_ENV: .*CORRAL_ALLOW_LOADER_ENV=1/);
      const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "loaded", prompt: "x", workdir: path.join(root, "w2") });
      expect(launched.status).toBe(201);
      const job = await finished(server, launched.body.id);
      expect(job.status).toBe("failed");
      expect(job.error).toMatch(/env\.BASH_ENV/);
      expect(trap.ran()).toBe(false);
      expect(trap.sourced()).toBe(false);
      // Removing the variable is the way out.
      expect((await api(server, "PATCH", "/api/agents/loaded", { env: {} })).status).toBe(200);
      expect((await api<AgentWithAvailability>(server, "GET", "/api/agents/loaded")).body.availability.available).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(!hasGit)("git settings from an agent's env", () => {
  const root = tempDir();
  const dataDir = path.join(root, "data");
  const workdir = path.join(root, "repo");
  const marker = path.join(root, "fsmonitor-ran");
  const hook = path.join(root, "fsmonitor.sh");
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  beforeAll(() => {
    mkdirSync(workdir);
    execFileSync("git", ["init", "-q"], { cwd: workdir });
    writeFileSync(hook, `#!/bin/sh\nid > '${marker}'\n`);
    chmodSync(hook, 0o755);
  });
  // core.fsmonitor is a command every `git status` runs: what a worker's git would run for whoever set it.
  const fsmonitorEnv = { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "core.fsmonitor", GIT_CONFIG_VALUE_0: hook };

  test("with CORRAL_ALLOW_LOADER_ENV=1, GIT_CONFIG_* really makes the worker's git run the hook", async () => {
    const server = await startServer({ CORRAL_ALLOW_LOADER_ENV: "1" }, { root, dataDir });
    try {
      const created = await api(server, "POST", "/api/agents", {
        name: "gitter",
        kind: "command",
        command: "git",
        args: ["status"],
        workdir,
        env: fsmonitorEnv,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gitter", prompt: "x" });
      expect((await finished(server, launched.body.id)).status).toBe("succeeded");
      expect(readFileSync(marker, "utf8")).toMatch(/^uid=/);
    } finally {
      await server.close();
    }
  });

  test("without it, GIT_CONFIG_* is refused on create, and the stored agent's job fails naming it: git never runs the hook", async () => {
    rmSync(marker);
    const server = await startServer({}, { root, dataDir });
    try {
      const created = await api<{ field: string; error: string }>(server, "POST", "/api/agents", {
        name: "gitter2",
        kind: "command",
        command: "git",
        args: ["status"],
        workdir,
        env: fsmonitorEnv,
      });
      expect(created.status).toBe(400);
      expect(created.body.field).toBe("env.GIT_CONFIG_COUNT");
      expect(created.body.error).toContain("CORRAL_ALLOW_LOADER_ENV=1");
      const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gitter", prompt: "x" });
      expect(launched.status).toBe(201);
      const job = await finished(server, launched.body.id);
      expect(job.status).toBe("failed");
      expect(job.error).toMatch(/env\.GIT_CONFIG_COUNT/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await server.close();
    }
  });
});
