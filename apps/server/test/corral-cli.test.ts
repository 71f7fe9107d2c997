import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { AgentListSchema, JobGroupSchema, JobListSchema, JobSchema, type Job } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildCorral } from "./built-corral.js";
import { jobDataPaths } from "../src/jobs/worker-process.js";
import { api, killGroupOf, printed, sleep, startServer, tempDir, until, type TestServer } from "./helpers.js";

// `corral` as users run it: the built command in a child process, against a real server on a real
// port, with the token from the server's data dir (the server runs without CORRAL_TOKEN).

let outdir: string;
let cli: string;
const root = tempDir();
let server: TestServer;
let lostJobId: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a user's shell would give: where the server's data is, nothing else of Corral's. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "", HOME: root, CORRAL_DATA_DIR: path.join(root, "data"), CORRAL_URL: server.url, ...extra };
}

function start(args: string[], env: NodeJS.ProcessEnv = userEnv()) {
  const child = spawn(process.execPath, [cli, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out.stderr += d.toString()));
  const done = new Promise<Run>((resolve) => child.once("close", (code) => resolve({ code, ...out })));
  return { child, out, done };
}

const corral = (args: string[], env?: NodeJS.ProcessEnv) => start(args, env).done;

const workdir = (name: string) => path.join(root, "w", name);

async function launch(agent: string, prompt: string, extra: Record<string, unknown> = {}): Promise<Job> {
  const res = await api<Job>(server, "POST", "/api/jobs", { agent, prompt, workdir: workdir(`${agent}-${Math.random()}`), ...extra });
  expect(res.status).toBe(201);
  return res.body;
}

beforeAll(async () => {
  outdir = await buildCorral();
  cli = path.join(outdir, "corral.js");
  // A job lost while the server was down: its worker died and left no exit status.
  const first = await startServer({ CORRAL_TOKEN: "" }, { root });
  const lost = await first.services.launches.launch("kiro", { prompt: "print 2\nhang", workdir: workdir("lost") }, "rest");
  // Its two lines are stored before its worker dies.
  const printed = async () => (await first.services.output.readOutput(lost.id, 0, 1024)).chunks.map((c) => c.text).join("");
  await until(async () => ((await printed()).includes("line 2\n") ? true : undefined));
  const pid = (await first.services.jobs.get(lost.id)).pid as number;
  await first.app.close();
  killGroupOf(pid);
  await sleep(300);
  rmSync(jobDataPaths(path.join(root, "data"), lost.id, 1).exit, { force: true });
  lostJobId = lost.id;
  server = await startServer({ CORRAL_TOKEN: "" }, { root });
}, 60_000);

afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
  rmSync(outdir, { recursive: true, force: true });
});

describe("talking to the server", () => {
  test("status finds the server from the settings the server reads (host, port, data dir) and its token file", async () => {
    const port = new URL(server.url).port;
    const env = userEnv({ CORRAL_PORT: port });
    delete env.CORRAL_URL;
    const text = await corral(["status"], env);
    expect(text).toMatchObject({ code: 0, stderr: "" });
    expect(text.stdout).toContain(`Corral at http://127.0.0.1:${port} is up.`);
    const json = await corral(["status", "--json"], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      url: `http://127.0.0.1:${port}`,
      running: expect.any(Number),
      queued: expect.any(Number),
      agents: { total: expect.any(Number), enabled: expect.any(Number), available: expect.any(Number) },
    });
  });

  test("agents lists every agent, and --json is the REST list", async () => {
    const text = await corral(["agents"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^NAME +KIND +ENABLED +AVAILABLE +MODEL +SOURCE\n/);
    expect(text.stdout).toMatch(/^gemini +gemini +yes +gemini 9\.9\.9-fake/m);
    const json = await corral(["agents", "--json"]);
    const list = AgentListSchema.parse(JSON.parse(json.stdout));
    expect(list.agents.map((a) => a.name)).toContain("kiro");
  });

  test("no server at the address: exit 7, saying how to start one", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const res = await corral(["jobs"], userEnv({ CORRAL_URL: `http://127.0.0.1:${port}` }));
    expect(res.code).toBe(7);
    expect(res.stderr).toBe(
      `corral: no Corral server answers at http://127.0.0.1:${port} (ECONNREFUSED): start it with \`corral serve\` (\`pnpm start\` in a checkout), or set CORRAL_URL to where it runs\n`,
    );
    // Following a job with no server: said at once, not after a minute of retries.
    const follow = await corral(["logs", "-f", lostJobId], userEnv({ CORRAL_URL: `http://127.0.0.1:${port}` }));
    expect(follow.code).toBe(7);
    expect(follow.stderr).toMatch(/^corral: no Corral server answers at .*corral serve/);
  });

  test("a wrong token: exit 8, saying where the token came from and what to set", async () => {
    const env = await corral(["jobs"], userEnv({ CORRAL_TOKEN: "not-the-token-0123456789" }));
    expect(env.code).toBe(8);
    expect(env.stderr).toBe("corral: the server refused the token from CORRAL_TOKEN: set CORRAL_TOKEN to the token the server runs with\n");
    // Another server's data dir: its token is refused too, and the message names the file.
    const other = tempDir();
    try {
      const missing = await corral(["status"], userEnv({ CORRAL_DATA_DIR: other }));
      expect(missing.code).toBe(8);
      expect(missing.stderr).toContain(`no token: ${path.join(other, "token")} does not exist`);
      const ws = await corral(["logs", "-f", lostJobId], userEnv({ CORRAL_TOKEN: "not-the-token-0123456789" }));
      expect(ws.code).toBe(8);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe("running jobs", () => {
  test("run waits for the job and prints its answer; --json prints the ended job", async () => {
    const res = await corral(["run", "--workdir", workdir("run-text"), "kiro", "print", "2"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("line 1\nline 2\ndone kiro-cli-chat\n");
    expect(res.stderr).toMatch(/^job [a-z0-9]+ queued on kiro; watch it with: corral logs -f [a-z0-9]+\njob [a-z0-9]+ \(kiro\) succeeded in /);
    const json = await corral(["run", "--json", "--workdir", workdir("run-json"), "gemini", "print 1"]);
    expect(json).toMatchObject({ code: 0, stderr: "" });
    const job = JobSchema.parse(JSON.parse(json.stdout));
    expect(job).toMatchObject({ agent: "gemini", status: "succeeded", prompt: "print 1", workdir: workdir("run-json") });
    expect(job.usage.inputTokens).toBeGreaterThan(0);
  });

  test("run --async prints the job id at once; --session continues that job", async () => {
    const res = await corral(["run", "--async", "--workdir", workdir("async"), "gemini", "print 1"]);
    expect(res.code).toBe(0);
    const id = res.stdout.trim();
    expect(id).toMatch(/^[a-z0-9]{6,32}$/);
    await until(async () => ((await api<Job>(server, "GET", `/api/jobs/${id}`)).body.status === "succeeded" ? true : undefined));
    const next = await corral(["run", "--json", "--session", id, "gemini", "recall"]);
    expect(next.code).toBe(0);
    const job = JobSchema.parse(JSON.parse(next.stdout));
    expect(job).toMatchObject({ followUpOf: id, conversationId: id, status: "succeeded" });
    expect(job.finalText).toContain("turn 1: print 1");
  });

  test("logs -f follows a running job to its end across a dropped connection, with no gap and no line twice", async () => {
    const job = await launch("kiro", "ticks 40 120");
    // Every connection goes through this proxy, which cuts them all once some output has arrived.
    const sockets = new Set<net.Socket>();
    let connections = 0;
    const proxy = net.createServer((client) => {
      connections++;
      const upstream = net.connect(Number(new URL(server.url).port), "127.0.0.1");
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on("error", () => {});
        s.on("close", () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
      const follower = start(["logs", "-f", job.id], userEnv({ CORRAL_URL: url }));
      await until(() => (/^tick 20 /m.test(follower.out.stdout) ? true : undefined), 20_000, "tick 20");
      for (const s of sockets) s.destroy();
      const res = await follower.done;
      expect(res.code).toBe(0);
      const ticks = res.stdout.split("\n").filter((line) => line.startsWith("tick "));
      expect(ticks.map((line) => Number(line.split(" ")[1]))).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
      expect(res.stdout.endsWith("\ndone kiro-cli-chat\n")).toBe(true);
      expect(connections).toBeGreaterThanOrEqual(2);
      expect(res.stderr).toMatch(new RegExp(`^job ${job.id} \\(kiro\\) succeeded in `));
    } finally {
      proxy.close();
    }
  });

  test("logs without -f prints the output so far; --json gives each piece with its cursor, then the job", async () => {
    const job = await launch("kiro", "print 3");
    await until(async () => ((await api<Job>(server, "GET", `/api/jobs/${job.id}`)).body.status === "succeeded" ? true : undefined));
    const text = await corral(["logs", job.id]);
    expect(text).toMatchObject({ code: 0, stdout: "line 1\nline 2\nline 3\ndone kiro-cli-chat\n" });
    const json = await corral(["logs", "--json", job.id]);
    const lines = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const last = lines.pop();
    expect(JobSchema.parse(last.job).id).toBe(job.id);
    expect(last.type).toBe("job");
    expect(lines.map((l) => l.text).join("")).toBe("line 1\nline 2\nline 3\ndone kiro-cli-chat\n");
    expect(lines.at(-1)).toMatchObject({ type: "output", stream: "out", cursor: expect.any(Number) });
  });

  test("logs shows a CLI agent's events as the Readable view does; --raw its own lines; an agent's name lists its jobs and shows the last", async () => {
    const job = await launch("gemini", "write result.txt 42");
    await until(async () => ((await api<Job>(server, "GET", `/api/jobs/${job.id}`)).body.status === "succeeded" ? true : undefined));
    const readable = await corral(["logs", job.id]);
    expect(readable.code).toBe(0);
    expect(readable.stdout).not.toContain('{"type"');
    expect(readable.stdout).toMatch(
      /^· session started · gemini-2\.5-flash\n› write result\.txt 42\n→ write_file \S+result\.txt\n← ok\n[\s\S]*✓ done · 2,500 in \/ 59 out/,
    );
    const raw = await corral(["logs", "--raw", job.id]);
    expect(raw.stdout).toContain('{"type":"init"');
    const byAgent = await corral(["logs", "gemini"]);
    expect(byAgent.code).toBe(0);
    expect(byAgent.stderr).toMatch(/^JOB +STATUS +TOOK +LAUNCHED \(UTC\) +PROMPT\n/);
    expect(byAgent.stderr).toContain(`${job.id}  succeeded`);
    expect(byAgent.stderr).toContain(`the last one, ${job.id}:`);
    expect(byAgent.stdout).toBe(readable.stdout);
  });

  test("logs -f into a reader that stops early (| head) ends quietly", async () => {
    // The job goes on after its lines: logs -f must end on the closed pipe, not at the job's end
    // (a job that ended first would add its end line to stderr on a loaded machine).
    const job = await launch("kiro", "print 200000\nhang");
    const shell = `"${process.execPath}" "${cli}" logs -f ${job.id} | head -n 2; echo "corral exited $?" >&2`;
    const res = await new Promise<Run>((resolve) => {
      const child = spawn("bash", ["-o", "pipefail", "-c", shell], { env: userEnv() });
      const out = { stdout: "", stderr: "" };
      child.stdout.on("data", (d: Buffer) => (out.stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out.stderr += d.toString()));
      child.once("close", (code) => resolve({ code, ...out }));
    });
    expect(res.stdout).toBe("line 1\nline 2\n");
    expect(res.stderr).toBe("corral exited 0\n");
    expect((await corral(["cancel", job.id])).code).toBe(0);
  });

  test("cancel stops a running job; logs -f then exits 4", async () => {
    const job = await launch("kiro", "print 1\nhang");
    // Printed before the cancel: running alone, a loaded machine may cancel it before its first line.
    await printed(server, job.id, "line 1");
    const follower = start(["logs", "-f", job.id]);
    const res = await corral(["cancel", job.id]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^job ${job.id}: cancel requested|^job ${job.id} cancelled`));
    const followed = await follower.done;
    expect(followed.code).toBe(4);
    expect(followed.stdout).toContain("line 1\n");
    const again = await corral(["cancel", "--json", job.id]);
    expect(JobSchema.parse(JSON.parse(again.stdout)).status).toBe("cancelled");
  });

  test.each([
    ["succeeded", 0, ["run", "kiro", "print 1"]],
    ["failed", 1, ["run", "kiro", "stderr boom\nexit 3"]],
    ["timed_out", 3, ["run", "--timeout", "1", "kiro", "sleep 30"]],
    ["budget_exceeded", 5, ["run", "--max-tokens", "500", "opencode", "write a.txt x\nsleep 30"]],
  ])("a job that ends %s exits %i", async (status, code, args) => {
    const [command, ...rest] = args as string[];
    const res = await corral([command as string, "--json", "--workdir", workdir(`exit-${status}`), ...rest]);
    expect(res.code).toBe(code);
    expect(JobSchema.parse(JSON.parse(res.stdout)).status).toBe(status);
  });

  test("a lost job exits 6, and a cancelled one 4, from logs -f as from run", async () => {
    const lost = await corral(["logs", "-f", lostJobId]);
    expect(lost.code).toBe(6);
    expect(lost.stdout).toContain("line 2\n");
    expect(lost.stderr).toMatch(/lost in .*left no exit status/);
    const job = await launch("kiro", "hang");
    const run = start(["logs", "-f", job.id]);
    await api(server, "POST", `/api/jobs/${job.id}/cancel`);
    expect((await run.done).code).toBe(4);
  });

  test("a launch a provider's budget refuses exits 5, with the server's message", async () => {
    const { body: codex } = await api<{ provider: string }>(server, "GET", "/api/agents/codex");
    const budget = await api<{ id: number }>(server, "POST", "/api/costs/budgets", { provider: codex.provider, period: "month", maxTokens: 1000 });
    expect(budget.status).toBe(201);
    try {
      expect((await corral(["run", "--workdir", workdir("budget-1"), "codex", "hi"])).code).toBe(0);
      const refused = await corral(["run", "--workdir", workdir("budget-2"), "codex", "hi"]);
      expect(refused.code).toBe(5);
      expect(refused.stderr).toMatch(/^corral: budget exceeded: .*monthly budget is 1000 tokens .*\(field: agent\)\n$/);
    } finally {
      await api(server, "DELETE", `/api/costs/budgets/${budget.body.id}`);
    }
  });

  test("jobs lists with the REST list's filters; --json is that list", async () => {
    const json = await corral(["jobs", "--json", "--agent", "kiro", "--status", "lost"]);
    const list = JobListSchema.parse(JSON.parse(json.stdout));
    expect(list.jobs.map((j) => j.id)).toEqual([lostJobId]);
    expect(list.total).toBe(1);
    const text = await corral(["jobs", "--limit", "1", "--status", "lost,succeeded"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ID +AGENT +STATUS +CREATED +TIME +COST +PROMPT\n[a-z0-9]+ +\w+ +(lost|succeeded) /);
    expect(text.stdout).toMatch(/\n… \d+ more \(--offset, --limit\)\n$/);
    const bad = await corral(["jobs", "--status", "finished"]);
    expect(bad.code).toBe(9);
    expect(bad.stderr).toMatch(/field: status/);
  });
});

describe("hostile arguments", () => {
  test("a prompt that starts with - is refused as an option unless it follows --, and then goes as is", async () => {
    const refused = await corral(["run", "kiro", "-rf /"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("place it at the end of the command after '--'");
    expect(refused.stderr).toContain("Usage: corral run [options] <agent> <prompt…>");
    const res = await corral(["run", "--json", "--workdir", workdir("dash"), "kiro", "--", "-rf /", "--json"]);
    expect(res.code).toBe(0);
    expect(JobSchema.parse(JSON.parse(res.stdout)).prompt).toBe("-rf / --json");
  });

  test("control characters reach the job as typed, and tables show them escaped", async () => {
    const prompt = "echo \u001b[2J\u001b]0;owned\u0007 bell\ttab\r\nnext";
    const res = await corral(["run", "--json", "--workdir", workdir("ctl"), "kiro", prompt]);
    expect(res.code).toBe(0);
    const job = JobSchema.parse(JSON.parse(res.stdout));
    expect(job.prompt).toBe(prompt);
    const list = await corral(["jobs", "--search", job.id]);
    expect(list.stdout).toContain("echo \\x1b[2J\\x1b]0;owned\\x07 bell\\ttab\\x0d\\nnext");
    expect(list.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
  });

  test("usage errors exit 2 with the usage line, before any server is asked", async () => {
    const noServer = { PATH: process.env.PATH ?? "", HOME: root, CORRAL_URL: "http://127.0.0.1:1" };
    const cases: [string[], RegExp][] = [
      [["run", "kiro"], /^corral: missing arguments\nUsage: corral run /],
      [["logs", "a", "b"], /^corral: unexpected argument "b"\nUsage: corral logs /],
      [["run", "--timeout", "soon", "kiro", "x"], /^corral: --timeout must be a number \(got "soon"\)/],
      [["jobs", "--bogus"], /^corral: Unknown option '--bogus'/],
      [["frobnicate"], /^corral: unknown command "frobnicate"/],
      [["\u001b[2J"], /^corral: unknown command "\\\\x1b\[2J"/],
    ];
    for (const [args, message] of cases) {
      const res = await corral(args, noServer);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr).toMatch(message);
    }
  });

  test("the server's refusals exit 9 and name the field", async () => {
    const unknown = await corral(["run", "nosuch", "x"]);
    expect(unknown.code).toBe(9);
    expect(unknown.stderr).toMatch(/^corral: agent nosuch does not exist.*\(field: agent\)\n$/);
    for (const id of ["../../etc/passwd", "nosuchjob00"]) {
      // logs takes an agent's name too: the refusal says it is neither.
      const logs = await corral(["logs", id]);
      expect(logs.code, id).toBe(9);
      expect(logs.stderr).toMatch(/; nor is it an agent's name \(corral jobs and corral agents list them\)\n$/);
      const cancel = await corral(["cancel", id]);
      expect(cancel.code, id).toBe(9);
    }
  });

  test("--help for every command says its usage and exits 0", async () => {
    const overview = await corral(["--help"], {});
    expect(overview.code).toBe(0);
    for (const name of ["status", "agents", "run", "logs", "cancel", "all", "jobs"]) {
      expect(overview.stdout).toContain(`\n  ${name} `);
      const res = await corral([name, "--help"], {});
      expect(res.code, name).toBe(0);
      expect(res.stdout).toMatch(new RegExp(`^Usage: corral ${name}\\b.*\\n\\n`));
    }
  });
});

// `corral all` goes through POST /api/jobs/many.
describe("all", () => {
  test("all runs the prompt on the agents named and prints each answer; exit 0 when all succeeded", async () => {
    const res = await corral(["all", "--agents", "kiro,gemini,claude", "--workdir", workdir("all"), "print 1"]);
    expect(res.code).toBe(0);
    for (const agent of ["kiro", "gemini", "claude"]) expect(res.stdout).toContain(`\n== ${agent} ==\n`);
    const json = await corral(["all", "--json", "--agents", "kiro,gemini", "--workdir", workdir("all-json"), "print 1"]);
    const group = JobGroupSchema.parse(JSON.parse(json.stdout));
    expect(group.jobs.map((j) => [j.agent, j.status])).toEqual([
      ["kiro", "succeeded"],
      ["gemini", "succeeded"],
    ]);
  });

  test("all exits with the status of the first job that did not succeed", async () => {
    const res = await corral(["all", "--agents", "gemini,kiro", "--timeout", "1", "--workdir", workdir("all-fail"), "sleep 30"]);
    expect(res.code).toBe(3);
  });
});

// After the budget test: /all runs a job on every agent, codex's provider included.
describe("shell", () => {
  test("shell: a line runs on the active agent and its answer shows as it comes; /agent, /agents, /all, /logs, /status, /quit", async () => {
    const child = spawn(process.execPath, [cli, "shell", "gemini"], { env: userEnv(), stdio: ["pipe", "pipe", "pipe"] });
    const out = { stdout: "", stderr: "" };
    child.stdout.on("data", (d: Buffer) => (out.stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out.stderr += d.toString()));
    const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
    child.stdin.end(
      ["write shell.txt hi", "/agents", "/agent kiro", "print 2", "/all say hi", "/logs gemini", "/status", "/nosuch", "/quit", ""].join("\n"),
    );
    expect(await closed, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^Corral at http:\/\/127\.0\.0\.1:\d+; talking to gemini\./);
    expect(out.stdout).toMatch(/· job \w+ on gemini\n/);
    expect(out.stdout).toContain("talking to kiro, a kiro agent");
    expect(out.stdout).toContain("line 1\nline 2\n");
    expect(out.stdout).toContain("== gemini ==");
    expect(out.stdout).toContain("== kiro ==");
    expect(out.stdout).toMatch(/\* gemini +gemini +yes +yes/);
    expect(out.stdout).toMatch(/the last one, \w+:\n· session started/);
    expect(out.stdout).toMatch(/Corral at \S+: \d+ running, \d+ queued; \d+ of \d+ agents available; talking to kiro/);
    expect(out.stdout).toContain("error: unknown command /nosuch; /help lists them");
  });
});
