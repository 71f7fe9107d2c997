import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { Job, JobRelaunches } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { api, startServer, type TestServer } from "./helpers.js";
import { connectMcp, textOf } from "./mcp-client.js";

/**
 * A job relaunched from another (the panel's Relaunch and Edit and relaunch) records which one
 * (`relaunchOf`), and every door tells it the same way: REST's job and the original's list of
 * relaunches, and MCP's `_done` line.
 */
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

let n = 0;
const workdir = () => {
  const dir = path.join(server.root, `relaunch-${++n}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

async function ran(body: Record<string, unknown>): Promise<Job> {
  const res = await api<Job>(server, "POST", "/api/jobs", body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const [job] = await server.services.waits.waitFor([res.body.id], 20_000);
  return job as Job;
}

type Refusal = { status: number; body: { error: string; field?: string } };
const launch = (body: Record<string, unknown>) => api(server, "POST", "/api/jobs", body) as Promise<Refusal>;
const relaunches = async (id: string) => (await api<JobRelaunches>(server, "GET", `/api/jobs/${id}/relaunches`)).body.jobs.map((j) => j.id);

describe("relaunchOf", () => {
  test("is recorded on the job, listed on the original, and said by MCP's _done", async () => {
    const original = await ran({ agent: "kiro", prompt: "print 1", workdir: workdir() });
    expect(original.relaunchOf).toBeNull();
    const first = await ran({ agent: "kiro", prompt: "print 1", workdir: original.workdir, relaunchOf: original.id });
    // Edited on the way: another agent and prompt still relaunch the original.
    const second = await ran({ agent: "gemini", prompt: "print 2", workdir: workdir(), relaunchOf: original.id });
    // A relaunch of a relaunch names the job it ran again, not the first one.
    const third = await ran({ agent: "kiro", prompt: "print 1", workdir: original.workdir, relaunchOf: first.id });

    expect((await api<Job>(server, "GET", `/api/jobs/${first.id}`)).body.relaunchOf).toBe(original.id);
    expect(await relaunches(original.id)).toEqual([first.id, second.id]);
    expect(await relaunches(first.id)).toEqual([third.id]);
    expect(await relaunches(third.id)).toEqual([]);
    const listed = (await api<{ jobs: Job[] }>(server, "GET", "/api/jobs?limit=5")).body.jobs.find((j) => j.id === second.id);
    expect(listed?.relaunchOf).toBe(original.id);

    const done = textOf(await mcp.callTool({ name: "kiro_done", arguments: { job_id: first.id } }));
    expect(done).toMatch(new RegExp(`^job ${first.id} · agent kiro · succeeded · .*relaunch of ${original.id}`, "m"));
    expect(textOf(await mcp.callTool({ name: "kiro_done", arguments: { job_id: original.id } }))).not.toContain("relaunch of");
  });

  test("must name a job that exists: anything else is refused naming the field, and nothing is launched", async () => {
    const before = (await api<{ total: number }>(server, "GET", "/api/jobs?limit=1")).body.total;
    const missing = await launch({ agent: "kiro", prompt: "print 1", workdir: workdir(), relaunchOf: "abcdef123456" });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ field: "relaunchOf" });
    expect(missing.body.error).toContain("abcdef123456");
    const hostile = ["", "-abcdef123", "ABCDEF123456", "abc", "a".repeat(33), "abcdef\n123456", "аbcdef123456", 42, null, ["abcdef123456"]];
    for (const value of hostile) {
      const res = await launch({ agent: "kiro", prompt: "print 1", workdir: workdir(), relaunchOf: value });
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(JSON.stringify(res.body), JSON.stringify(value)).toContain("relaunchOf");
    }
    // One prompt to several agents relaunches no one job.
    const many = await api(server, "POST", "/api/jobs/many", { agents: ["kiro"], prompt: "print 1", relaunchOf: "abcdef123456" });
    expect(many.status).toBe(400);
    expect((await api<{ total: number }>(server, "GET", "/api/jobs?limit=1")).body.total).toBe(before);
  });

  test("the list of relaunches answers 404 for a job that does not exist, and 401 without the token", async () => {
    expect((await api(server, "GET", "/api/jobs/abcdef123456/relaunches")).status).toBe(404);
    expect((await fetch(`${server.url}/api/jobs/abcdef123456/relaunches`)).status).toBe(401);
  });
});
