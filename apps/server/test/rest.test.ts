import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { AgentWithAvailability, Job, JobAttempt, JobList, OutputPage, OutputTail } from "@corral/shared";
import { api, startServer, type TestServer } from "./helpers.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

type ErrorBody = { error: string; field?: string; issues?: { field: string; message: string }[] };

describe("agents", () => {
  test("lists the built-in agents with availability", async () => {
    const { status, body } = await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents");
    expect(status).toBe(200);
    const gemini = body.agents.find((a) => a.name === "gemini");
    expect(gemini).toMatchObject({
      kind: "gemini",
      builtin: true,
      effectiveModel: "gemini-2.5-flash",
      workdir: path.join(server.root, "corral-work", "gemini"),
    });
    expect(gemini?.availability.available).toBe(true);
  });

  test("can be added, changed, disabled and deleted; definitions persist", async () => {
    const created = await api<AgentWithAvailability>(server, "POST", "/api/agents", {
      name: "plantuml",
      kind: "command",
      command: "echo",
      args: ["rendered", "{prompt}"],
      maxConcurrent: 2,
      env: { JAVA_OPTS: "-Xmx1g" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "plantuml", provider: "local", builtin: false, maxConcurrent: 2 });
    expect(created.body.availability.available).toBe(true);
    const changed = await api<AgentWithAvailability>(server, "PATCH", "/api/agents/plantuml", { timeoutS: 30, enabled: false });
    expect(changed.body).toMatchObject({ timeoutS: 30, enabled: false });
    const refused = await api<ErrorBody>(server, "POST", "/api/jobs", { agent: "plantuml", prompt: "x" });
    expect(refused.status).toBe(409);
    expect(refused.body.field).toBe("agent");
    expect((await api(server, "DELETE", "/api/agents/plantuml")).status).toBe(204);
    expect((await api(server, "GET", "/api/agents/plantuml")).status).toBe(404);
  });

  test("a built-in agent cannot be deleted, only disabled", async () => {
    const res = await api<ErrorBody>(server, "DELETE", "/api/agents/gemini");
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/disable it instead/);
  });

  test("bad bodies name the field", async () => {
    const cases: [unknown, string][] = [
      [{ name: "Bad Name", kind: "command", command: "x" }, "name"],
      [{ name: "ok", kind: "robot" }, "kind"],
      [{ name: "ok2", kind: "command" }, "command"],
      [{ name: "ok3", kind: "command", command: "x", maxConcurrent: 0 }, "maxConcurrent"],
      [{ name: "ok4", kind: "command", command: "x", env: { "1BAD": "x" } }, "env.1BAD"],
      [{ name: "ok5", kind: "command", command: "x", surprise: true }, "surprise"],
    ];
    for (const [body, field] of cases) {
      const res = await api<ErrorBody>(server, "POST", "/api/agents", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.issues?.map((i) => i.field)).toContain(field);
    }
    const dup = await api<ErrorBody>(server, "POST", "/api/agents", { name: "gemini", kind: "gemini" });
    expect(dup.status).toBe(409);
  });
});

describe("jobs", () => {
  let workdirs = 0;
  const workdir = () => path.join(server.root, `rest-${++workdirs}`);

  test("launch, detail, output from a cursor, and the list with filters", async () => {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "print 3", workdir: workdir() });
    expect(launched.status).toBe(201);
    expect(launched.body).toMatchObject({ agent: "kiro", status: "queued", origin: "rest" });
    await server.services.waits.waitFor([launched.body.id], 10_000);
    const detail = await api<Job>(server, "GET", `/api/jobs/${launched.body.id}`);
    expect(detail.body.status).toBe("succeeded");
    const out = await api<OutputPage>(server, "GET", `/api/jobs/${launched.body.id}/output?cursor=0`);
    expect(out.body.chunks.map((c) => c.text).join("")).toBe("line 1\nline 2\nline 3\ndone kiro-cli-chat\n");
    expect(out.body.complete).toBe(true);
    const again = await api<OutputPage>(server, "GET", `/api/jobs/${launched.body.id}/output?cursor=${out.body.cursor}`);
    expect(again.body.chunks).toEqual([]);
    const list = await api<JobList>(server, "GET", "/api/jobs?agent=kiro&status=succeeded,failed&limit=5");
    expect(list.body.jobs.every((j) => j.agent === "kiro")).toBe(true);
    expect(list.body.total).toBeGreaterThanOrEqual(1);
    const search = await api<JobList>(server, "GET", "/api/jobs?q=print%203");
    expect(search.body.jobs.map((j) => j.id)).toContain(launched.body.id);
    const none = await api<JobList>(server, "GET", "/api/jobs?q=%25");
    expect(none.body.jobs.every((j) => j.prompt.includes("%"))).toBe(true);
  });

  test("cancel over REST", async () => {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "hang", workdir: workdir() });
    const cancelled = await api<Job>(server, "POST", `/api/jobs/${launched.body.id}/cancel`);
    expect(cancelled.body.status).toBe("cancelled");
  });

  test("paging keeps the newest first and counts them all", async () => {
    const ids = [];
    for (let i = 0; i < 5; i++)
      ids.push((await api<Job>(server, "POST", "/api/jobs", { agent: "codex", prompt: `page ${i}`, workdir: workdir() })).body.id);
    await server.services.waits.waitFor(ids, 10_000);
    const first = await api<JobList>(server, "GET", "/api/jobs?agent=codex&limit=2");
    const second = await api<JobList>(server, "GET", "/api/jobs?agent=codex&limit=2&offset=2");
    expect(first.body.jobs.map((j) => j.prompt)).toEqual(["page 4", "page 3"]);
    expect(second.body.jobs.map((j) => j.prompt)).toEqual(["page 2", "page 1"]);
    expect(first.body.total).toBe(5);
  });

  test("bad input names the field", async () => {
    const cases: [string, string, unknown, string][] = [
      ["POST", "/api/jobs", { agent: "gemini" }, "prompt"],
      ["POST", "/api/jobs", { agent: "gemini", prompt: "" }, "prompt"],
      ["POST", "/api/jobs", { agent: "gemini", prompt: "x", timeoutS: -1 }, "timeoutS"],
      ["POST", "/api/jobs", { agent: "gemini", prompt: "x", workdir: "/etc" }, "workdir"],
      ["POST", "/api/jobs", { prompt: "x" }, "agent"],
      ["GET", "/api/jobs?limit=0", undefined, "limit"],
      ["GET", "/api/jobs?status=sleeping", undefined, "status.0"],
      ["GET", "/api/jobs?color=red", undefined, "color"],
      ["GET", "/api/jobs/NOT-AN-ID", undefined, "id"],
    ];
    for (const [method, url, body, field] of cases) {
      const res = await api<ErrorBody>(server, method, url, body);
      expect(res.status, `${method} ${url} ${JSON.stringify(body)}`).toBe(400);
      const fields = [res.body.field, ...(res.body.issues?.map((i) => i.field) ?? [])];
      expect(fields, res.body.error).toContain(field);
    }
    const unknownAgent = await api<ErrorBody>(server, "POST", "/api/jobs", { agent: "nobody", prompt: "x" });
    expect(unknownAgent.status).toBe(404);
    expect(unknownAgent.body.field).toBe("agent");
    const unknownJob = await api<ErrorBody>(server, "GET", "/api/jobs/abcdefabcdef");
    expect(unknownJob.status).toBe(404);
  });

  test("a cursor that is not a record boundary is refused", async () => {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "gemini", prompt: "print 5", workdir: workdir() });
    await server.services.waits.waitFor([launched.body.id], 10_000);
    const res = await api<ErrorBody>(server, "GET", `/api/jobs/${launched.body.id}/output?cursor=3`);
    expect(res.status).toBe(400);
    expect(res.body.field).toBe("cursor");
  });

  test("malformed JSON gets a JSON error", async () => {
    const res = await fetch(`${server.url}/api/jobs`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json" },
      body: "{nope",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error).toMatch(/JSON/i);
  });
});

test("each attempt of a retried job is listed with its part of the output", async () => {
  const marker = path.join(server.root, "attempt-marker");
  const launched = await api<Job>(server, "POST", "/api/jobs", {
    agent: "kiro",
    prompt: `fail-once ${marker} 75\nprint 1`,
    workdir: path.join(server.root, "attempts"),
    retry: { maxAttempts: 2, exitCodes: [75], backoffS: 0 },
  });
  expect(launched.status).toBe(201);
  await server.services.waits.waitFor([launched.body.id], 10_000);
  const { body } = await api<{ attempts: JobAttempt[] }>(server, "GET", `/api/jobs/${launched.body.id}/attempts`);
  expect(body.attempts.map((a) => a.status)).toEqual(["failed", "succeeded"]);
  const [first, second] = body.attempts;
  expect(first?.outputStart).toBe(0);
  expect(second?.outputStart).toBeGreaterThanOrEqual(first?.outputEnd ?? Number.POSITIVE_INFINITY);
  const bad = await api<ErrorBody>(server, "POST", "/api/jobs", {
    agent: "kiro",
    prompt: "x",
    retry: { maxAttempts: 2, outputPatterns: ["(unclosed"] },
  });
  expect(bad.status).toBe(400);
  expect(bad.body.issues?.map((i) => i.field)).toContain("retry.outputPatterns.0");
});

test("the tail of a job's output, for the panel's activity line", async () => {
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent: "kiro", prompt: "print 40", workdir: path.join(server.root, "tail") });
  await server.services.waits.waitFor([launched.body.id], 10_000);
  const tail = await api<{ text: string }>(server, "GET", `/api/jobs/${launched.body.id}/tail?chars=30`);
  expect(tail.body.text).toContain("done kiro-cli-chat");
  expect(tail.body.text).not.toContain("line 1\n");
  const bad = await api<ErrorBody>(server, "GET", `/api/jobs/${launched.body.id}/tail?chars=0`);
  expect(bad.status).toBe(400);
  expect(bad.body.issues?.map((i) => i.field)).toContain("chars");
  expect((await api(server, "GET", "/api/jobs/abcdefabcdef/tail")).status).toBe(404);
});

test("the tail's latest line reads as the Readable view does, never as the CLI's JSON", async () => {
  const tailOf = async (agent: string, prompt: string) => {
    const launched = await api<Job>(server, "POST", "/api/jobs", { agent, prompt, workdir: path.join(server.root, `tail-${agent}`) });
    await server.services.waits.waitFor([launched.body.id], 10_000);
    return (await api<OutputTail>(server, "GET", `/api/jobs/${launched.body.id}/tail`)).body;
  };
  const gemini = await tailOf("gemini", "print 3");
  expect(gemini.text).toContain('"type":"result"');
  expect(gemini.line).toMatch(/^✓ done · \d[\d,]* in \/ \d+ out/);
  expect((await tailOf("claude", "print 3")).line).toMatch(/^✓ done · /);
  expect((await tailOf("codex", "print 3")).line).toMatch(/^✓ turn done · /);
  expect((await tailOf("opencode", "print 3")).line).toMatch(/^· step done · /);
  expect((await tailOf("kiro", "print 3")).line).toBe("done kiro-cli-chat");
});
