import { execFileSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, test } from "vitest";
import type { Job, JobList } from "@corral/shared";
import { isFinalStatus } from "@corral/shared";
import { api, startServer, tempDir, until } from "./helpers.js";
import { connectMcp } from "./mcp-client.js";
import { registryOnPostgres } from "./postgres.js";
import { failedStart, startServerProcess } from "./server-process.js";

// These damage, sabotage or inspect the SQLite file itself: `pnpm test:pg` keeps none.
const onSqliteFile = describe.skipIf(registryOnPostgres);

const token = "registry-test-token-0123456789";
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function newRoot(): string {
  const root = tempDir();
  roots.push(root);
  return root;
}

const hasSqlite3 = (() => {
  try {
    execFileSync("sqlite3", ["-version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
if (!hasSqlite3) console.log("skipping the recovery-command test: the sqlite3 program is not installed (apt-get install sqlite3)");

/** A registry with `count` finished jobs, written by a real server that then stopped. */
async function registryWithJobs(root: string, count: number): Promise<string[]> {
  const server = await startServer({ CORRAL_TOKEN: token }, { root, dataDir: path.join(root, "data") });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { body } = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: `job ${i}`, workdir: path.join(root, `w${i}`) });
    ids.push(body.id);
  }
  await server.services.waits.waitFor(ids, 20_000);
  await server.close();
  return ids;
}

/** Overwrites the root page of a table or index with garbage, as a torn write or a bad disk would. */
function corruptIndex(file: string, index: string): void {
  const db = new Database(file);
  db.pragma("wal_checkpoint(TRUNCATE)");
  const { rootpage } = db.prepare("select rootpage from sqlite_master where name = ?").get(index) as { rootpage: number };
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  db.close();
  const fd = openSync(file, "r+");
  writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (rootpage - 1) * pageSize);
  closeSync(fd);
}

/** The shell command of a numbered remedy in the start-up message. */
function remedy(message: string, marker: string): string {
  const command = message
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.startsWith("cd ") && l.includes(marker));
  if (!command) throw new Error(`no command with ${marker} in:\n${message}`);
  return command;
}

async function jobsOf(port: number): Promise<JobList> {
  const res = await fetch(`http://127.0.0.1:${port}/api/jobs?limit=100`, { headers: { authorization: `Bearer ${token}` } });
  return (await res.json()) as JobList;
}

onSqliteFile("a damaged registry is refused at start, with what to do", () => {
  test("a file with a garbage header: a clear message, no stack trace, and moving it aside works", async () => {
    const root = newRoot();
    const dataDir = path.join(root, "data");
    mkdirSync(dataDir);
    const file = path.join(dataDir, "corral.db");
    writeFileSync(file, Buffer.alloc(16_384, "not a database, just bytes "));

    const failed = await failedStart(root, { CORRAL_TOKEN: token });
    expect(failed.code).toBe(1);
    expect(failed.stdout).not.toContain("Open:");
    expect(failed.stderr).toContain(`${file} is not an SQLite database`);
    expect(failed.stderr).toContain("Restore corral.db from a backup");
    expect(failed.stderr).not.toMatch(/^\s+at /m);
    expect(failed.stderr).not.toContain("SqliteError");

    execFileSync("/bin/sh", ["-c", remedy(failed.stderr, "mv corral.db*")]);
    const server = await startServerProcess(root, { CORRAL_TOKEN: token });
    try {
      expect((await jobsOf(server.port)).total).toBe(0);
    } finally {
      await server.stop();
    }
    const aside = readdirSync(dataDir).find((name) => name.startsWith("damaged-"));
    expect(readdirSync(path.join(dataDir, aside ?? "missing"))).toContain("corral.db");
  });

  test("a corrupted index page: refused before anything runs, naming the damage", async () => {
    const root = newRoot();
    await registryWithJobs(root, 3);
    const file = path.join(root, "data", "corral.db");
    corruptIndex(file, "jobs_status_idx");

    const failed = await failedStart(root, { CORRAL_TOKEN: token });
    expect(failed.code).toBe(1);
    expect(failed.stdout).not.toContain("Open:");
    expect(failed.stderr).toContain(`its registry ${file} is damaged`);
    expect(failed.stderr).toMatch(/Tree \d+ page \d+: btreeInitPage\(\) returns error code 11/);
    expect(failed.stderr).toContain("sqlite3 corral.db .dump");
    expect(failed.stderr).not.toMatch(/^\s+at /m);
  });

  test("a corrupted page of the jobs text index is refused too, though its virtual table is not checked as a whole", async () => {
    const root = newRoot();
    await registryWithJobs(root, 3);
    corruptIndex(path.join(root, "data", "corral.db"), "jobs_search_data");
    const failed = await failedStart(root, { CORRAL_TOKEN: token });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/its registry .* is damaged/);
  });

  test.skipIf(!hasSqlite3)("the printed recovery command brings every job back, and the server starts on the result", async () => {
    const root = newRoot();
    const ids = await registryWithJobs(root, 5);
    const dataDir = path.join(root, "data");
    corruptIndex(path.join(dataDir, "corral.db"), "jobs_status_idx");
    const failed = await failedStart(root, { CORRAL_TOKEN: token });

    execFileSync("/bin/sh", ["-c", remedy(failed.stderr, ".dump")]);
    const server = await startServerProcess(root, { CORRAL_TOKEN: token });
    try {
      const list = await jobsOf(server.port);
      expect(list.jobs.map((j) => j.id).sort()).toEqual([...ids].sort());
      expect(list.jobs.every((j) => j.status === "succeeded")).toBe(true);
      // sqlite3 wrote the recovered file 0644; Corral narrowed it.
      expect(statSync(path.join(dataDir, "corral.db")).mode & 0o777).toBe(0o600);
    } finally {
      await server.stop();
    }
  });
});

onSqliteFile("a change and its audit entry are one write", () => {
  test("a launch whose audit entry fails leaves no job, answers the generic 500, and the server keeps serving", async () => {
    const server = await startServer();
    try {
      const announced: string[] = [];
      server.services.jobEvents.on("job", (job) => announced.push(job.id));
      const direct = new Database(path.join(server.dataDir, "corral.db"));
      direct.exec("CREATE TRIGGER audit_broken BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit is broken'); END");

      const workdir = path.join(server.root, "w");
      const refused = await api<{ error: string }>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "hello", workdir });
      expect(refused.status).toBe(500);
      expect(refused.body.error).toBe("internal error; the server log has the details");
      const mcp = await connectMcp(server);
      const viaMcp = await mcp.callTool({ name: "gemini_run_async", arguments: { prompt: "hello", workdir } });
      expect(viaMcp.isError).toBe(true);
      await mcp.close();
      expect((direct.prepare("select count(*) as n from jobs").get() as { n: number }).n).toBe(0);
      expect(announced).toEqual([]);

      direct.exec("DROP TRIGGER audit_broken");
      const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "hello", workdir });
      expect(launched.status).toBe(201);
      const ended = await until(async () => {
        const { body } = await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`);
        return isFinalStatus(body.status) ? body : undefined;
      });
      expect(ended.status).toBe("succeeded");
      expect((direct.prepare("select count(*) as n from audit_log").get() as { n: number }).n).toBe(1);
      direct.close();
    } finally {
      await server.close();
    }
  });

  test("a cancel whose status write fails stores no audit entry, and the queued job stays queued and still runs", async () => {
    const server = await startServer();
    try {
      expect((await api(server, "PATCH", "/api/agents/gemini", { maxConcurrent: 1 })).status).toBe(200);
      const workdir = (name: string) => path.join(server.root, name);
      const first = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "hang", workdir: workdir("a") });
      // One at a time: this one waits in the queue.
      const second = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "hello", workdir: workdir("b") });
      expect(second.body.status).toBe("queued");
      const direct = new Database(path.join(server.dataDir, "corral.db"));
      direct.exec(
        "CREATE TRIGGER cancel_broken BEFORE UPDATE OF status ON jobs WHEN NEW.status = 'cancelled' BEGIN SELECT RAISE(ABORT, 'jobs table is broken'); END",
      );
      const cancels = () => (direct.prepare("select count(*) as n from audit_log where action = 'cancel'").get() as { n: number }).n;

      const refused = await api<{ error: string }>(server, "POST", `/api/jobs/${second.body.id}/cancel`);
      expect(refused.status).toBe(500);
      expect(refused.body.error).toBe("internal error; the server log has the details");
      expect(cancels()).toBe(0);
      expect((await api<Job>(server, "GET", `/api/jobs/${second.body.id}`)).body.status).toBe("queued");

      direct.exec("DROP TRIGGER cancel_broken");
      expect((await api<Job>(server, "POST", `/api/jobs/${first.body.id}/cancel`)).body.status).toBe("cancelled");
      expect(cancels()).toBe(1);
      direct.close();
      const ended = await until(async () => {
        const { body } = await api<Job>(server, "GET", `/api/jobs/${second.body.id}`);
        return isFinalStatus(body.status) ? body : undefined;
      });
      expect(ended.status).toBe("succeeded");
    } finally {
      await server.close();
    }
  });
});

onSqliteFile("the data dir is private", () => {
  /** Every entry under `dir` whose mode is not owner-only (0700 dirs, 0600 files). */
  function loose(dir: string): string[] {
    const found: string[] = [];
    const mode = (p: string) => statSync(p).mode & 0o777;
    if (mode(dir) !== 0o700) found.push(`${dir} ${mode(dir).toString(8)}`);
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      const full = path.join(entry.parentPath, entry.name);
      const want = entry.isDirectory() ? 0o700 : 0o600;
      if (mode(full) !== want) found.push(`${full} ${mode(full).toString(8)}`);
    }
    return found;
  }

  test("under umask 022 with a data dir that already existed, everything Corral writes there is owner-only; looser old files are narrowed", async () => {
    const root = newRoot();
    const dataDir = path.join(root, "data");
    mkdirSync(dataDir, { mode: 0o755 });
    const server = await startServerProcess(root, {}, { umask: "022" });
    try {
      const secret = readFileSync(path.join(dataDir, "token"), "utf8").trim();
      const res = await fetch(`http://127.0.0.1:${server.port}/api/jobs`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ agent: "kiro", prompt: "print 2\nwrite out.txt ok", workdir: path.join(root, "w") }),
      });
      const job = (await res.json()) as Job;
      await until(async () => {
        const now = await fetch(`http://127.0.0.1:${server.port}/api/jobs/${job.id}`, { headers: { authorization: `Bearer ${secret}` } });
        return isFinalStatus(((await now.json()) as Job).status) ? true : undefined;
      });
      for (const name of ["corral.db", "corral.db-wal", "corral.db-shm", "token", `jobs/${job.id}/output.log`, `jobs/${job.id}/attempt-1.exit`]) {
        expect(existsSync(path.join(dataDir, name)), name).toBe(true);
      }
      expect(loose(dataDir)).toEqual([]);
    } finally {
      await server.stop();
    }

    // Files from a version that did not care, or another tool (sqlite3 writes 0644).
    for (const [name, mode] of [
      ["", 0o755],
      ["token", 0o644],
      ["corral.db", 0o644],
    ] as const) {
      chmodSync(path.join(dataDir, name), mode);
    }
    const again = await startServerProcess(root, {}, { umask: "022" });
    try {
      for (const name of ["", "token", "corral.db", "corral.db-wal", "corral.db-shm"]) {
        expect(statSync(path.join(dataDir, name)).mode & 0o077, name || "the data dir").toBe(0);
      }
    } finally {
      await again.stop();
    }
  });
});
