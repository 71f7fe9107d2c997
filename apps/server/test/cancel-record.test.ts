import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import { groupAlive } from "../src/jobs/process-group.js";
import { api, killGroupOf, printed, startServer, tempDir, until, type TestServer } from "./helpers.js";
import { withRegistryOf } from "./registry-of.js";
import { connectMcp } from "./mcp-client.js";

/**
 * A job's page tells who cancelled it, when, and whether its worker had to be killed: the request
 * and the SIGKILL are stored on the job (before they are announced), and a restart honours a
 * request the previous server could not finish.
 */

async function launch(server: TestServer, prompt: string, workdir: string): Promise<Job> {
  const res = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt, workdir });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const get = async (server: TestServer, id: string) => (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;

describe("who cancelled a job", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  test("each door is recorded: the panel, plain REST and MCP, with the client and the time", async () => {
    const [panel, rest, mcp] = await Promise.all(
      ["panel", "rest", "mcp"].map((name) => launch(server, "print 1\nhang", path.join(server.root, `who-${name}`))),
    );
    if (!panel || !rest || !mcp) throw new Error("launch failed");
    for (const job of [panel, rest, mcp]) await printed(server, job.id, "line 1");
    const before = Date.now();

    const byPanel = await fetch(`${server.url}/api/jobs/${panel.id}/cancel`, {
      method: "POST",
      headers: { ...server.auth, "x-corral-client": "panel" },
    });
    expect(byPanel.status).toBe(200);
    const byRest = await fetch(`${server.url}/api/jobs/${rest.id}/cancel`, {
      method: "POST",
      headers: { ...server.auth, "user-agent": "curl/8.5.0" },
    });
    expect(byRest.status).toBe(200);
    const client = await connectMcp(server);
    try {
      await client.callTool({ name: "corral_cancel", arguments: { job_id: mcp.id } });
    } finally {
      await client.close();
    }

    const [p, r, m] = await Promise.all([panel, rest, mcp].map((j) => get(server, j.id)));
    expect(p?.status).toBe("cancelled");
    expect(p?.cancel).toMatchObject({ by: "panel", client: "panel" });
    expect(r?.cancel).toMatchObject({ by: "rest", client: "curl/8.5.0" });
    expect(m?.cancel).toMatchObject({ by: "mcp", client: "corral-test/1.0.0" });
    for (const job of [p, r, m]) {
      expect(job?.cancel?.at).toBeGreaterThanOrEqual(before);
      expect(job?.cancel?.at).toBeLessThanOrEqual(job?.endedAt ?? 0);
      // These workers stop on SIGTERM: it never came to SIGKILL.
      expect(job?.killedAt).toBeNull();
    }
  });

  test("a queued job cancelled before it started records the request too; a job nobody cancelled has none", async () => {
    const dir = path.join(server.root, "queued");
    // With kiro running one job at a time, the second waits in the queue.
    expect((await api(server, "PATCH", "/api/agents/kiro", { maxConcurrent: 1 })).status).toBe(200);
    const blocker = await launch(server, "print 1\nhang", path.join(server.root, "blocker"));
    const queued = await launch(server, "print 1", dir);
    expect((await get(server, queued.id)).status).toBe("queued");
    const res = await fetch(`${server.url}/api/jobs/${queued.id}/cancel`, {
      method: "POST",
      headers: { ...server.auth, "x-corral-client": "panel" },
    });
    const ended = (await res.json()) as Job;
    expect(ended.status).toBe("cancelled");
    expect(ended.cancel?.by).toBe("panel");
    expect(ended.startedAt).toBeNull();
    expect((await get(server, blocker.id)).cancel).toBeNull();
    await api(server, "POST", `/api/jobs/${blocker.id}/cancel`);
  });
});

test("a worker that ignores SIGTERM is killed after the grace period, and the job says so", async () => {
  const server = await startServer({ CORRAL_KILL_GRACE_MS: "300" });
  try {
    const job = await launch(server, "ignore-term\nprint 1\nhang", path.join(server.root, "stubborn"));
    await printed(server, job.id, "line 1");
    const res = await api<Job>(server, "POST", `/api/jobs/${job.id}/cancel`);
    expect(res.body.status).toBe("cancelled");
    expect(res.body.cancel?.by).toBe("rest");
    expect(res.body.killedAt).not.toBeNull();
    // SIGKILL comes only once the grace period after the request (and its SIGTERM) has passed.
    expect(res.body.killedAt ?? 0).toBeGreaterThanOrEqual((res.body.cancel?.at ?? 0) + 300);
    expect(res.body.killedAt ?? 0).toBeLessThanOrEqual(res.body.endedAt ?? 0);
  } finally {
    await server.close();
  }
});

test("a cancel the server could not finish before it went down is finished by the next start", async () => {
  const root = tempDir();
  try {
    // A grace period far longer than the test: the first server goes down while it waits.
    const first = await startServer({ CORRAL_KILL_GRACE_MS: "600000" }, { root });
    const job = await launch(first, "ignore-term\nprint 1\nhang", path.join(root, "w"));
    await printed(first, job.id, "line 1");
    void first.services.cancels.cancel(job.id, { door: "mcp", client: "orchestrator" }).catch(() => undefined);
    await until(async () => ((await first.services.jobs.get(job.id)).cancel ? true : undefined), 5_000, "the cancel request stored");
    await first.app.close();
    // The request is in the registry file itself, not only in the first server's memory.
    const row = await withRegistryOf(path.join(root, "data"), (registry) => registry.jobs.get(job.id));
    expect(row).toMatchObject({ status: "running", cancelledBy: "mcp", cancelClient: "orchestrator" });

    const second = await startServer({ CORRAL_KILL_GRACE_MS: "300" }, { root });
    try {
      const [ended] = await second.services.waits.waitFor([job.id], 15_000);
      expect(ended?.status, ended?.error ?? "").toBe("cancelled");
      expect(ended?.cancel).toMatchObject({ by: "mcp", client: "orchestrator" });
      expect(ended?.killedAt).not.toBeNull();
    } finally {
      await second.app.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a cancel stored just before the server went down, its worker not yet signalled, is carried out by the next start", async () => {
  const root = tempDir();
  try {
    const first = await startServer({}, { root });
    const job = await launch(first, "print 1\nhang", path.join(root, "w"));
    await printed(first, job.id, "line 1");
    await first.app.close();
    // What the registry holds had the server died right after storing the request.
    await withRegistryOf(path.join(root, "data"), (registry) =>
      registry.jobs.update(job.id, { cancelRequestedAt: Date.now(), cancelledBy: "panel", cancelClient: "panel" }),
    );

    const second = await startServer({}, { root });
    try {
      const [ended] = await second.services.waits.waitFor([job.id], 15_000);
      expect(ended?.status, ended?.error ?? "").toBe("cancelled");
      expect(ended?.cancel?.by).toBe("panel");
      expect(ended?.killedAt).toBeNull();
    } finally {
      await second.app.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a job stored as running that nothing follows (its end could not be stored) is still cancelled, its group stopped", async () => {
  const server = await startServer();
  const worker = spawn("sleep", ["600"], { detached: true, stdio: "ignore" });
  const pid = worker.pid as number;
  try {
    const job = await launch(server, "print 1", path.join(server.root, "w"));
    await server.services.waits.waitFor([job.id], 15_000);
    // The row as a server whose end write failed leaves it: running, with its worker's group.
    await withRegistryOf(server.dataDir, (registry) => registry.jobs.update(job.id, { status: "running", endedAt: null, pid, pidStart: null }));
    const res = await api<Job>(server, "POST", `/api/jobs/${job.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("cancelled");
    expect(groupAlive(pid)).toBe(false);
    // The workdir is free again.
    expect((await launch(server, "print 1", path.join(server.root, "w"))).status).toBe("queued");
  } finally {
    if (groupAlive(pid)) killGroupOf(pid);
    await server.close();
  }
});
