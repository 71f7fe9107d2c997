// `pnpm registry:copy`, as a user runs it: a server used on SQLite, stopped; the copy as its own
// process; a server on the same data dir with CORRAL_DATABASE_URL answers as the first did.
import { spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import type { Job, JobList } from "@corral/shared";
import { openDb } from "../src/db/client.js";
import { openPgDb } from "../src/db/pg/client.js";
import { api, printed, startServer, tempDir, type TestServer } from "./helpers.js";
import { usePostgres } from "./postgres.js";
import { hasTool } from "./required-tool.js";

const pg = usePostgres();
const copyEntry = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src/db/registry-copy-main.ts");

/**
 * `pnpm registry:copy` from source, with only these Corral settings. `onTerminal`: its output is a
 * terminal, as when a user runs it (script(1) gives it one; stderr comes through it too).
 */
function runCopy(env: Record<string, string>, { onTerminal = false } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("CORRAL_")));
  const command = [process.execPath, "--import", "tsx", "--conditions=corral-source", copyEntry];
  const quoted = command.map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ");
  const [file, ...args]: string[] = onTerminal ? ["script", "-qefc", quoted, "/dev/null"] : command;
  const child = spawn(file as string, args, {
    env: { ...clean, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});
function keptRoot(): string {
  const root = tempDir();
  roots.push(root);
  return root;
}

/** A server whose registry is the SQLite file in its data dir, whatever run the suite is (test:pg too). */
const onSqlite = (root: string) => startServer({ CORRAL_DATABASE_URL: "" }, { root });

async function launch(server: TestServer, body: Record<string, unknown>): Promise<string> {
  const res = await api<Job>(server, "POST", "/api/jobs", { workdir: path.join(server.root, "work", String(body.agent)), ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** Everything a user sees of the registry through REST, job by job. */
async function snapshot(server: TestServer, until: number) {
  const get = async (url: string) => {
    const res = await api(server, "GET", url);
    expect(res.status, url).toBe(200);
    return res.body;
  };
  const list = (await get("/api/jobs?limit=100")) as JobList;
  const perJob: Record<string, unknown> = {};
  for (const job of list.jobs) {
    perJob[job.id] = {
      output: await get(`/api/jobs/${job.id}/output?cursor=0`),
      files: await get(`/api/jobs/${job.id}/files`),
      attempts: await get(`/api/jobs/${job.id}/attempts`),
    };
  }
  return {
    jobs: list,
    perJob,
    agents: await get("/api/agents"),
    costs: await get(`/api/costs?groupBy=provider&from=0&to=${until}`),
    budgets: await get("/api/costs/budgets"),
    prices: await get("/api/costs/prices"),
    audit: await get("/api/audit"),
    messages: await get("/api/conversations/rest/messages"),
  };
}

describe.skipIf(!pg.available)("pnpm registry:copy", () => {
  test("a registry used on SQLite answers the same from PostgreSQL, and goes on numbering", async () => {
    const root = keptRoot();
    const first = await onSqlite(root);
    const dataDir = first.dataDir;
    const ids: Record<string, string> = {};
    try {
      expect((await api(first, "PATCH", "/api/agents/gemini", { timeoutS: 60, description: "changed before the move" })).status).toBe(200);
      expect((await api(first, "POST", "/api/agents", { name: "mine", kind: "opencode" })).status).toBe(201);
      expect((await api(first, "POST", "/api/costs/budgets", { provider: "anthropic", period: "month", maxTokens: 1_000_000 })).status).toBe(201);
      expect((await api(first, "PUT", "/api/costs/prices", { provider: "openai", model: "my-finetune", inputPerM: 1, outputPerM: 10 })).status).toBe(
        200,
      );

      ids.succeeded = await launch(first, { agent: "gemini", prompt: "write a.txt hello\nprint 3" });
      ids.failed = await launch(first, { agent: "codex", prompt: "print 2\nexit 3", model: "my-finetune" });
      ids.retried = await launch(first, {
        agent: "claude",
        prompt: `print 1\nfail-once ${path.join(root, "marker")} 75 transient\nwrite b.txt second`,
        retry: { maxAttempts: 2, exitCodes: [75], backoffS: 0 },
      });
      ids.cancelled = await launch(first, { agent: "kiro", prompt: "print 1\nhang" });
      await printed(first, ids.cancelled, "1");
      expect((await api<Job>(first, "POST", `/api/jobs/${ids.cancelled}/cancel`)).status).toBe(200);
      await first.services.waits.waitFor(Object.values(ids), 20_000);

      const script = await api<{ key: string }>(first, "POST", "/api/conversations/rest/agents", { name: "script" });
      await api(first, "POST", "/api/conversations/rest/agents", { name: "helper" });
      expect((await api(first, "POST", "/api/conversations/rest/messages", { key: script.body.key, to: "helper", text: "ping" })).status).toBe(201);
      expect(
        (await api(first, "POST", "/api/conversations/rest/messages", { key: script.body.key, to: "helper", text: "nul \u0000 here" })).status,
      ).toBe(201);
    } finally {
      await first.close();
    }
    // A prompt can come with U+0000 from MCP or REST; PostgreSQL refuses it, so it becomes U+FFFD.
    const sqlite = new Database(path.join(dataDir, "corral.db"));
    sqlite.prepare("update jobs set prompt = prompt || char(0) || 'after nul' where id = ?").run(ids.failed);
    sqlite.close();

    const reopened = await onSqlite(root);
    const until = Date.now() + 1_000;
    const before = await snapshot(reopened, until);
    await reopened.close();
    expect(before.jobs.jobs.map((j) => j.status).sort()).toEqual(["cancelled", "failed", "succeeded", "succeeded"]);
    // What is compared is not empty: output, files, two attempts, audit entries.
    expect(JSON.stringify(before.perJob[ids.succeeded ?? ""])).toContain("a.txt");
    expect(JSON.stringify(before.perJob[ids.failed ?? ""])).toContain("thread.started");
    expect((before.perJob[ids.retried ?? ""] as { attempts: { attempts: unknown[] } }).attempts.attempts).toHaveLength(2);
    expect(JSON.stringify(before.audit)).toContain(ids.cancelled);

    const url = await pg.database();
    const copy = await runCopy({ CORRAL_DATA_DIR: dataDir, CORRAL_DATABASE_URL: url, HOME: root });
    expect(copy.stderr).toBe("");
    expect(copy.code).toBe(0);
    expect(copy.stdout).toMatch(/^ {2}jobs: 4 rows$/m);
    expect(copy.stdout).toMatch(/^ {2}job_attempts: 5 rows$/m);
    expect(copy.stdout).toMatch(/^ {2}hub_messages: 2 rows$/m);
    expect(copy.stdout).toMatch(/^Copied [\d,]+ rows in 16 tables in [\d.]+ s\.$/m);

    const second = await startServer({ CORRAL_DATABASE_URL: url }, { root, dataDir });
    try {
      const after = await snapshot(second, until);
      const expected = JSON.parse(JSON.stringify(before).replaceAll("\\u0000", "\ufffd")) as typeof before;
      expect(after).toEqual(expected);
      expect(after.jobs.jobs.find((j) => j.id === ids.failed)?.prompt).toBe("print 2\nexit 3\ufffdafter nul");
      expect(JSON.stringify(after.messages)).toContain("nul \ufffd here");

      // Numbering goes on after the copied jobs, audit entries and messages.
      const next = await launch(second, { agent: "gemini", prompt: "print 1" });
      await second.services.waits.waitFor([next], 20_000);
      const list = (await api<JobList>(second, "GET", "/api/jobs?limit=100")).body.jobs;
      expect(list.map((j) => j.id)).toEqual([next, ...before.jobs.jobs.map((j) => j.id)]);
      expect(list[0]?.status).toBe("succeeded");
      const key = (await api<{ key: string }>(second, "POST", "/api/conversations/rest/agents", { name: "later" })).body.key;
      expect((await api(second, "POST", "/api/conversations/rest/messages", { key, to: "helper", text: "after the move" })).status).toBe(201);
      expect((await api(second, "POST", "/api/costs/budgets", { provider: "google", period: "day", maxTokens: 5 })).status).toBe(201);
    } finally {
      await second.close();
    }

    // Now that a server has used it, the target is refused, and left as it was.
    const again = await runCopy({ CORRAL_DATA_DIR: dataDir, CORRAL_DATABASE_URL: url, HOME: root });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds Corral data \(agents, jobs, .*\); nothing was copied/);
    expect(again.stderr).toContain("before any Corral server starts on it");
    expect(again.stderr).toContain(
      `(dropdb ${new URL(url).pathname.slice(1)} && createdb --owner ${new URL(url).username} ${new URL(url).pathname.slice(1)})`,
    );
  }, 120_000);

  test("refused without CORRAL_DATABASE_URL, without an SQLite registry, and while a server uses the data dir", async () => {
    const root = keptRoot();
    const url = await pg.database();
    const unset = await runCopy({ CORRAL_DATA_DIR: path.join(root, "data"), HOME: root });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toMatch(/^CORRAL_DATABASE_URL is not set: set it to the PostgreSQL registry/);

    const notPg = await runCopy({ CORRAL_DATA_DIR: path.join(root, "data"), CORRAL_DATABASE_URL: "mysql://x@y/z", HOME: root });
    expect(notPg.code).toBe(1);
    expect(notPg.stderr).toContain("CORRAL_DATABASE_URL: must be a PostgreSQL URL");

    const empty = path.join(root, "empty");
    mkdirSync(empty);
    const missing = await runCopy({ CORRAL_DATA_DIR: empty, CORRAL_DATABASE_URL: url, HOME: root });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`${path.join(empty, "corral.db")} does not exist. Set CORRAL_DATA_DIR`);

    const running = await onSqlite(root);
    try {
      const busy = await runCopy({ CORRAL_DATA_DIR: running.dataDir, CORRAL_DATABASE_URL: url, HOME: root });
      expect(busy.code).toBe(1);
      expect(busy.stderr).toContain("is open in another process (a Corral server using");
    } finally {
      await running.close();
    }
    // None of those touched the target: the copy still goes through once the server has stopped.
    const copy = await runCopy({ CORRAL_DATA_DIR: path.join(root, "data"), CORRAL_DATABASE_URL: url, HOME: root });
    expect(copy.stderr).toBe("");
    expect(copy.stdout).toMatch(/^ {2}agents: \d+ rows$/m);
  }, 60_000);

  test.skipIf(!hasTool("script", ["--version"], "util-linux gives script(1) a terminal"))(
    "on a terminal a table's progress is one line updated in place; in a log file the lines stay plain",
    async () => {
      const root = keptRoot();
      const dataDir = path.join(root, "data");
      const file = path.join(dataDir, "corral.db");
      openDb(file).close();
      const sqlite = new Database(file);
      sqlite
        .prepare(
          "insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, builtin, created_at, updated_at) values ('here', 'command', 'here', '/tmp', 60, 1, '{}', 1, 0, 1, 1)",
        )
        .run();
      const job = sqlite.prepare(
        "insert into jobs (id, agent, status, prompt, workdir, timeout_s, origin, created_at) values (?, 'here', 'succeeded', 'p', '/tmp', 60, 'rest', 1)",
      );
      sqlite.transaction(() => {
        for (let i = 0; i < 5000; i++) job.run(`j${i}`);
      })();
      sqlite.close();

      const onTerminal = await runCopy({ CORRAL_DATA_DIR: dataDir, CORRAL_DATABASE_URL: await pg.database(), HOME: root }, { onTerminal: true });
      expect(onTerminal.code, onTerminal.stdout).toBe(0);
      // Each batch rewrites the line (\r, then the rest of the line erased), and the table's count ends it.
      const told = [...onTerminal.stdout.matchAll(/\r {2}jobs: ([\d,]+) of 5,000 rows \((\d+) %\)\u001b\[K/g)].map((m) =>
        Number(m[1]?.replaceAll(",", "")),
      );
      expect(told.length).toBeGreaterThan(1);
      expect(told.every((rows, i) => rows > (told[i - 1] ?? 0) && rows < 5000)).toBe(true);
      expect(onTerminal.stdout).toMatch(/\r {2}jobs: 5,000 rows\u001b\[K\r?\n {2}job_attempts: 0 rows\r?\n/);

      const inLog = await runCopy({ CORRAL_DATA_DIR: dataDir, CORRAL_DATABASE_URL: await pg.database(), HOME: root });
      expect(inLog.stderr).toBe("");
      expect(inLog.stdout).not.toMatch(/[\r\u001b]/);
      expect(inLog.stdout).toMatch(/^ {2}jobs: 5,000 rows$/m);
      // A line at most every second: how many depends on the machine's speed, but each says how far it came.
      for (const line of inLog.stdout.split("\n").filter((l) => l.includes(" of ")))
        expect(line).toMatch(/^ {2}jobs: [\d,]+ of 5,000 rows \(\d+ %\)$/);
    },
    60_000,
  );

  test("a table PostgreSQL refuses rolls the whole copy back: the target stays empty, and a copy after the fix goes through", async () => {
    const root = keptRoot();
    const dataDir = path.join(root, "data");
    const file = path.join(dataDir, "corral.db");
    openDb(file).close();
    // A job whose agent is gone: SQLite keeps it with foreign keys off, PostgreSQL will not.
    const sqlite = new Database(file);
    sqlite.pragma("foreign_keys = OFF");
    sqlite
      .prepare(
        "insert into agents (name, kind, provider, workdir, timeout_s, max_concurrent, env, enabled, builtin, created_at, updated_at) values ('here', 'command', 'here', '/tmp', 60, 1, '{}', 1, 0, 1, 1)",
      )
      .run();
    const job = sqlite.prepare(
      "insert into jobs (id, agent, status, prompt, workdir, timeout_s, origin, created_at) values (?, ?, 'succeeded', 'p', '/tmp', 60, 'rest', 1)",
    );
    job.run("kept", "here");
    job.run("orphan", "ghost");
    sqlite.close();

    const url = await pg.database();
    const failed = await runCopy({ CORRAL_DATA_DIR: dataDir, CORRAL_DATABASE_URL: url, HOME: root });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^ {2}agents: 1 row$/m);
    expect(failed.stderr).toMatch(
      /^Copying jobs failed, so nothing was copied \(the target is as empty as before\): .*foreign key.*\(Key \(agent\)=\(ghost\) is not present/,
    );
    expect(failed.stderr).not.toContain("params:");
    const target = await openPgDb(url);
    try {
      const { rows } = await target.db.$client.query<{ n: number }>("select (select count(*) from agents) + (select count(*) from jobs) as n");
      expect(rows[0]?.n).toBe(0);
    } finally {
      await target.close();
    }

    const fixing = new Database(file);
    fixing.prepare("delete from jobs where id = 'orphan'").run();
    fixing.close();
    const copy = await runCopy({ CORRAL_DATA_DIR: dataDir, CORRAL_DATABASE_URL: url, HOME: root });
    expect(copy.stderr).toBe("");
    expect(copy.stdout).toMatch(/^ {2}jobs: 1 row$/m);
  }, 60_000);
});
