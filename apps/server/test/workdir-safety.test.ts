import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { Job } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadConfig } from "../src/config.js";
import { api, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

let server: TestServer;
let outside: string;
let mcp: Client;
beforeAll(async () => {
  server = await startServer();
  mcp = await connectMcp(server);
  outside = tempDir("corral-outside-");
  writeFileSync(path.join(outside, "victim.txt"), "precious");
});
afterAll(async () => {
  await mcp.close();
  await server.close();
});

const finished = (id: string) => server.services.waits.waitFor([id], 20_000).then(([job]) => job as Job);
const outputOf = async (id: string) => server.services.output.outputTail(await server.services.jobs.get(id), 100_000);

async function launch(body: Record<string, unknown>) {
  const res = await api<Job & { error?: string; field?: string }>(server, "POST", "/api/jobs", body);
  return res;
}

describe("answer files are written inside the workdir only", () => {
  test("output.md made a link out by the repo: refused, noted in the log, the job still succeeds", async () => {
    const workdir = path.join(server.root, "linked-answer");
    mkdirSync(workdir);
    symlinkSync(path.join(outside, "victim.txt"), path.join(workdir, "output.md"));
    const res = await launch({ agent: "opencode", prompt: "the answer is 42", workdir });
    expect(res.status).toBe(201);
    const job = await finished(res.body.id);
    expect(job.status).toBe("succeeded");
    expect(job.finalText).toContain("the answer is 42");
    expect(readFileSync(path.join(outside, "victim.txt"), "utf8")).toBe("precious");
    expect(await outputOf(job.id)).toMatch(/\[corral\] could not write output\.md: refused: output\.md resolves outside the working directory/);
  });

  test("output.md made a FIFO: the job ends at once instead of hanging on it", async () => {
    const workdir = path.join(server.root, "fifo-answer");
    mkdirSync(workdir);
    execFileSync("mkfifo", [path.join(workdir, "output.md")]);
    const res = await launch({ agent: "opencode", prompt: "the answer is 42", workdir });
    const job = await finished(res.body.id);
    expect(job.status).toBe("succeeded");
    expect(await outputOf(job.id)).toMatch(/could not write output\.md: refused: output\.md is not a regular file/);
  });
});

describe("a workdir is checked again when its job starts", () => {
  /** Holds the agent's only slot so the next job waits in the queue; returns a function that frees it. */
  async function occupy(agent: string): Promise<() => Promise<void>> {
    await server.services.agents.update(agent, { maxConcurrent: 1 });
    const blocker = await launch({ agent, prompt: "hang", workdir: path.join(server.root, `${agent}-blocker`) });
    await until(async () => ((await server.services.jobs.get(blocker.body.id)).status === "running" ? true : undefined));
    return async () => {
      await api(server, "POST", `/api/jobs/${blocker.body.id}/cancel`);
    };
  }

  test("a queued job whose workdir became a link out of the roots fails with the reason and writes nothing", async () => {
    const release = await occupy("gemini");
    const workdir = path.join(server.root, "swapped");
    const res = await launch({ agent: "gemini", prompt: "write escaped.txt pwned", workdir });
    expect(res.status).toBe(201);
    expect((await server.services.jobs.get(res.body.id)).status).toBe("queued");
    renameSync(workdir, `${workdir}.old`);
    symlinkSync(outside, workdir);
    await release();
    const job = await finished(res.body.id);
    expect(job.status).toBe("failed");
    expect(job.error).toMatch(/the job was not run: its workdir changed after launch.*outside the allowed workdir roots/);
    expect(job.invocation).toBeNull();
    expect(readdirSync(outside).sort()).toEqual(["victim.txt"]);
  });

  test("a retry is a start too: a workdir swapped for a link out during the backoff fails the next attempt", async () => {
    const workdir = path.join(server.root, "retried");
    const retry = { maxAttempts: 3, exitCodes: [75], backoffS: 2 };
    const res = await launch({ agent: "gemini", prompt: "fail-once marker 75 busy\nwrite escaped.txt pwned", workdir, retry });
    await until(async () => {
      const job = await server.services.jobs.get(res.body.id);
      return job.attempt === 2 && job.status === "queued" ? true : undefined;
    });
    renameSync(workdir, `${workdir}.old`);
    symlinkSync(outside, workdir);
    const job = await finished(res.body.id);
    expect(job.status).toBe("failed");
    expect(job.attempt).toBe(2);
    expect(job.error).toMatch(/the job was not run: its workdir changed after launch/);
    expect(readdirSync(outside).sort()).toEqual(["victim.txt"]);
  });

  test("a queued job whose workdir became a link inside the roots runs in the real directory", async () => {
    const release = await occupy("kiro");
    const workdir = path.join(server.root, "moved");
    const real = path.join(server.root, "real-target");
    mkdirSync(real);
    const res = await launch({ agent: "kiro", prompt: "write here.txt ok", workdir });
    renameSync(workdir, `${workdir}.old`);
    symlinkSync(real, workdir);
    await release();
    const job = await finished(res.body.id);
    expect(job.status).toBe("succeeded");
    expect(job.workdir).toBe(real);
    expect(job.invocation?.cwd).toBe(real);
    expect(existsSync(path.join(real, "here.txt"))).toBe(true);
  });
});

describe("workdirs no file system call could take are refused with 400, naming workdir", () => {
  const bad = () => [
    ["a NUL byte", path.join(server.root, "a\0b")],
    ["a name over 255 bytes", path.join(server.root, "n".repeat(256))],
    ["a path over 4095 bytes", `~/${[...Array.from({ length: 20 }, () => "d".repeat(200)), "e".repeat(70)].join("/")}`],
    ["an existing file", path.join(server.root, "plain-file")],
  ];

  test("over REST", async () => {
    writeFileSync(path.join(server.root, "plain-file"), "");
    for (const [what, workdir] of bad()) {
      const res = await launch({ agent: "gemini", prompt: "x", workdir });
      expect(res.status, what).toBe(400);
      expect(res.body.field, what).toBe("workdir");
    }
  });

  test("over MCP", async () => {
    writeFileSync(path.join(server.root, "plain-file"), "");
    for (const [what, workdir] of bad()) {
      const res = await mcp.callTool({ name: "gemini_run_async", arguments: { prompt: "x", workdir } });
      expect(res.isError, what).toBe(true);
      expect(textOf(res), what).toMatch(/^error: workdir: /);
    }
  });
});

describe("a worker's command line is bounded", () => {
  test("an argument template that repeats {prompt} is refused at launch, naming args and the limit; no job is made", async () => {
    const name = "echo_many";
    const created = await api(server, "POST", "/api/agents", {
      name,
      kind: "command",
      command: "echo",
      args: Array.from({ length: 200 }, () => "{prompt}".repeat(500)),
      workdir: path.join(server.root, "many"),
    });
    expect(created.status).toBe(201);
    const before = (await server.services.jobs.list({ limit: 1, offset: 0 })).total;
    const res = await launch({ agent: name, prompt: "p".repeat(100_000) });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe("args");
    expect(res.body.error).toMatch(/100000 times.*1 MiB/);
    expect((await server.services.jobs.list({ limit: 1, offset: 0 })).total).toBe(before);
    // A prompt small enough for every copy still runs.
    const small = await launch({ agent: name, prompt: "p" });
    expect(small.status).toBe(201);
    expect((await finished(small.body.id)).status).toBe("succeeded");
  });

  test("a prompt longer than one argument may be is refused at launch, naming prompt and the limit", async () => {
    const res = await launch({ agent: "gemini", prompt: "q".repeat(200_000), workdir: path.join(server.root, "long-prompt") });
    expect(res.status).toBe(400);
    expect(res.body.field).toBe("prompt");
    expect(res.body.error).toMatch(/200000 bytes.*128 KiB per argument/);
    const viaMcp = await mcp.callTool({ name: "gemini_run_async", arguments: { prompt: "q".repeat(200_000) } });
    expect(viaMcp.isError).toBe(true);
    expect(textOf(viaMcp)).toMatch(/^error: prompt: .*128 KiB/);
  });
});

describe("Corral's data dir is never a workdir", () => {
  test("the data dir, a directory inside it and one that holds it are refused, naming workdir", async () => {
    const server = await startServer();
    try {
      for (const workdir of [server.dataDir, path.join(server.dataDir, "jobs", "x"), server.root]) {
        const res = await api<{ error: string; field: string }>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "print 1", workdir });
        expect(res.status, workdir).toBe(400);
        expect(res.body.field).toBe("workdir");
        expect(res.body.error).toMatch(/Corral's data dir/);
      }
      expect(existsSync(path.join(server.dataDir, "jobs", "x"))).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe("an agent's default workdir passes the launch checks", () => {
  const agentsOf = async (s: TestServer) => (await api<{ agents: { name: string; workdir: string }[] }>(s, "GET", "/api/agents")).body.agents;

  test("with roots that leave out the home dir, every agent's default lies under the first root, and a launch with defaults runs", async () => {
    const root = tempDir();
    const projects = path.join(root, "projects");
    mkdirSync(projects);
    const s = await startServer({ CORRAL_WORKDIR_ROOTS: `${projects}${path.delimiter}${root}` }, { root });
    try {
      for (const agent of await agentsOf(s)) expect(agent.workdir, agent.name).toBe(path.join(projects, "corral-work", agent.name));
      const created = await api<{ workdir: string }>(s, "POST", "/api/agents", { name: "mine", kind: "command", command: "true" });
      expect(created.body.workdir).toBe(path.join(projects, "corral-work", "mine"));
      const res = await api<Job>(s, "POST", "/api/jobs", { agent: "kiro", prompt: "write a.txt 1" });
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      const [job] = await s.services.waits.waitFor([res.body.id], 20_000);
      expect(job?.status).toBe("succeeded");
      expect(readFileSync(path.join(projects, "corral-work", "kiro", "a.txt"), "utf8")).toBe("1");
    } finally {
      await s.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("a first root whose corral-work folder would hold the data dir is passed over", async () => {
    const root = tempDir();
    const s = await startServer(
      { CORRAL_WORKDIR_ROOTS: `${root}${path.delimiter}${path.join(root, "other")}` },
      { root, dataDir: path.join(root, "corral-work", "data") },
    );
    try {
      expect((await agentsOf(s)).find((a) => a.name === "gemini")?.workdir).toBe(path.join(root, "other", "corral-work", "gemini"));
    } finally {
      await s.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("CORRAL_DEFAULT_WORKDIR keeps pyCorral's folders for those who migrate; a template without {agent} is refused", async () => {
    const s = await startServer({ CORRAL_DEFAULT_WORKDIR: "~/misRepos/corral/{agent}" });
    try {
      expect((await agentsOf(s)).find((a) => a.name === "qwen")?.workdir).toBe("~/misRepos/corral/qwen");
    } finally {
      await s.close();
    }
    expect(() => loadConfig({ CORRAL_DEFAULT_WORKDIR: "/srv/work" })).toThrow(/CORRAL_DEFAULT_WORKDIR: must contain \{agent\}/);
    expect(() => loadConfig({ CORRAL_DEFAULT_WORKDIR: "work/{agent}" })).toThrow(/CORRAL_DEFAULT_WORKDIR: must be an absolute path/);
  });
});
