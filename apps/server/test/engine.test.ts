import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isFinalStatus, type Job } from "@corral/shared";
import { groupAlive } from "../src/jobs/process-group.js";
import type { LaunchRequest } from "../src/jobs/launch-request.js";
import { startServer, until, type TestServer } from "./helpers.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ CORRAL_KILL_GRACE_MS: "300" });
});
afterAll(() => server.close());

let workdirs = 0;
/** kiro prints plain text; each job gets a workdir of its own unless it names one. */
const launch = (prompt: string, extra: Partial<LaunchRequest> & { agent?: string } = {}) => {
  const { agent = "kiro", workdir = path.join(server.root, `work-${++workdirs}`), ...rest } = extra;
  return server.services.launches.launch(agent, { prompt, workdir, ...rest }, "rest");
};
const finished = async (launched: Job | Promise<Job>) => {
  const job = await launched;
  return (await server.services.waits.waitFor([job.id], 20_000))[0] as Job;
};
const output = async (job: Job) => (await server.services.output.readOutput(job.id, 0, 64 * 1024 * 1024)).chunks.map((c) => c.text).join("");

describe("a worker", () => {
  test("writes its file in the workdir and succeeds", async () => {
    const job = await finished(launch("write hello.txt hi there"));
    expect(job.status).toBe("succeeded");
    expect(job.exitCode).toBe(0);
    expect(readFileSync(path.join(job.workdir, "hello.txt"), "utf8")).toBe("hi there");
    expect(job.invocation?.args).toEqual(["chat", "--no-interactive", "--trust-all-tools", "--", "write hello.txt hi there"]);
    expect(job.startedAt).not.toBeNull();
    expect(job.endedAt).not.toBeNull();
  });

  test("gets its prompt as one argv entry, never through a shell", async () => {
    const prompt = "echo $(touch pwned) `touch pwned2`; touch pwned3 && echo '\"quoted\"'";
    const job = await finished(launch(prompt, { workdir: path.join(server.root, "shell") }));
    expect(job.status).toBe("succeeded");
    expect(await output(job)).toContain(prompt);
    for (const f of ["pwned", "pwned2", "pwned3"]) expect(existsSync(path.join(job.workdir, f))).toBe(false);
  });

  test("keeps a large output on disk and readable from any cursor", async () => {
    const job = await finished(launch("print 50000"));
    expect(job.status).toBe("succeeded");
    const lines = (await output(job)).trimEnd().split("\n");
    expect(lines).toHaveLength(50001);
    expect(lines[49999]).toBe("line 50000");
    // Page through it from cursor 0 in small reads: every line once, in order.
    let cursor = 0;
    let text = "";
    for (;;) {
      const page = await server.services.output.readOutput(job.id, cursor, 4096);
      text += page.chunks.map((c) => c.text).join("");
      if (page.complete) break;
      cursor = page.cursor;
    }
    expect(text).toBe(await output(job));
    expect(job.outputBytes).toBeGreaterThan(500_000);
  });

  test("that fails reports its exit code and stderr tail", async () => {
    const job = await finished(launch("stderr invalid flag --frobnicate\nexit 3"));
    expect(job.status).toBe("failed");
    expect(job.exitCode).toBe(3);
    expect(job.error).toContain("exit code 3");
    expect(job.error).toContain("invalid flag --frobnicate");
    expect(job.attempt).toBe(1);
    const chunks = (await server.services.output.readOutput(job.id, 0, 65536)).chunks;
    expect(chunks).toContainEqual({ stream: "err", text: "invalid flag --frobnicate\n" });
  });

  test("that hangs is killed at its timeout, with every process of its group", async () => {
    const job = await finished(launch("fork 2\nhang", { timeoutS: 1 }));
    expect(job.status).toBe("timed_out");
    expect(job.error).toBe("timed out after 1 s");
    expect(job.pid).not.toBeNull();
    expect(groupAlive(job.pid as number)).toBe(false);
  });

  test("that ignores SIGTERM and forks children is killed by cancel, group and all", async () => {
    const job = await launch("fork 3\nignore-term\nhang");
    await until(async () => ((await server.services.jobs.get(job.id)).status === "running" ? true : undefined));
    await until(() => (server.services.output.outputTail(job, 100) === "" ? undefined : true), 5000).catch(() => true);
    const cancelled = await server.services.cancels.cancel(job.id);
    expect(cancelled.status).toBe("cancelled");
    expect(groupAlive(cancelled.pid as number)).toBe(false);
  });

  test("whose binary is missing fails with what to install or set", async () => {
    await server.services.agents.create({ name: "ghost", kind: "command", command: "no-such-tool-anywhere" });
    const job = await finished(launch("x", { agent: "ghost" }));
    expect(job.status).toBe("failed");
    expect(job.error).toMatch(/no-such-tool-anywhere was not found on PATH/);
    const [agent] = await server.services.agents.withAvailability([await server.services.agents.get("ghost")]);
    expect(agent?.availability.available).toBe(false);
  });

  test("names a missing CLI's install command and CORRAL_<AGENT>_BIN", async () => {
    await server.services.agents.update("codex", { command: "codex-not-installed" });
    const job = await finished(launch("x", { agent: "codex" }));
    await server.services.agents.update("codex", { command: null });
    expect(job.error).toContain("npm install -g @openai/codex");
    expect(job.error).toContain("CORRAL_CODEX_BIN");
  });

  test("of opencode leaves its answer in output.md", async () => {
    const job = await finished(launch("the answer is 42", { agent: "opencode", workdir: path.join(server.root, "oc") }));
    expect(job.status).toBe("succeeded");
    expect(readFileSync(path.join(job.workdir, "output.md"), "utf8")).toContain("the answer is 42");
  });
});

describe("retries", () => {
  const attemptText = async (job: Job, attempt: { outputStart: number; outputEnd: number | null }) => {
    const text = (await server.services.output.readOutput(job.id, attempt.outputStart, 1 << 20)).chunks.map((c) => c.text).join("");
    return attempt.outputEnd === null
      ? text
      : Buffer.from(text)
          .subarray(0, attempt.outputEnd - attempt.outputStart)
          .toString();
  };

  test("a transient failure is tried again after the backoff; each attempt keeps its own output", async () => {
    const marker = path.join(server.root, "first-attempt-done");
    const job = await finished(
      launch(`print 2\nfail-once ${marker} 75\nwrite ok.txt fine`, {
        retry: { maxAttempts: 3, exitCodes: [75], outputPatterns: [], backoffS: 0.2 },
      }),
    );
    expect(job.status).toBe("succeeded");
    expect(job.attempt).toBe(2);
    const attempts = await server.services.jobs.attempts(job.id);
    expect(attempts.map((a) => [a.attempt, a.status, a.exitCode])).toEqual([
      [1, "failed", 75],
      [2, "succeeded", 0],
    ]);
    const [first, second] = attempts;
    if (!first || !second) throw new Error("two attempts expected");
    expect(first.outputEnd).not.toBeNull();
    expect(await attemptText(job, second)).toContain("wrote ok.txt");
    expect(await output(job)).toMatch(/attempt 1 of 3 failed \(exit code 75\); retrying in 0.2 s/);
  });

  test("a failure the policy does not name ends the job at once", async () => {
    const job = await finished(launch("exit 9", { retry: { maxAttempts: 3, exitCodes: [75], outputPatterns: ["rate limit"], backoffS: 0 } }));
    expect(job.status).toBe("failed");
    expect(await server.services.jobs.attempts(job.id)).toHaveLength(1);
  });

  test("an agent's policy applies to its jobs; built-in CLI agents retry rate limits", async () => {
    expect((await server.services.agents.get("gemini")).retry?.outputPatterns).toContain("rate.?limit");
    const marker = path.join(server.root, "rate-limited-once");
    await server.services.agents.update("claude", { retry: { maxAttempts: 2, exitCodes: [], outputPatterns: ["rate.?limit"], backoffS: 0.1 } });
    const job = await finished(launch(`fail-once ${marker} 1 429 rate limit exceeded`, { agent: "claude" }));
    expect(job.status).toBe("succeeded");
    expect(job.attempt).toBe(2);
  });

  test("cancel during the backoff ends the job", async () => {
    const job = await launch("exit 75", { retry: { maxAttempts: 5, exitCodes: [75], outputPatterns: [], backoffS: 60 } });
    await until(async () => ((await server.services.jobs.get(job.id)).attempt === 2 ? true : undefined));
    const cancelled = await server.services.cancels.cancel(job.id);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.error).toMatch(/while waiting to retry/);
  });
});

describe("the workdir guard", () => {
  test("refuses a second job in a busy workdir unless it opts in", async () => {
    const workdir = path.join(server.root, "busy");
    const first = await launch("sleep 0.5", { workdir });
    await expect(launch("x", { workdir })).rejects.toThrowError(new RegExp(`in use by job ${first.id}`));
    const second = launch("x", { workdir, sharedWorkdir: true });
    await finished(first);
    await finished(second);
    expect((await finished(launch("y", { workdir }))).status).toBe("succeeded");
  });
});

test("a worker that moves its own workdir away still ends cleanly; the answer file's failure is noted", async () => {
  const workdir = path.join(server.root, "moved-away");
  const job = await finished(launch("rename ../moved-away ../moved-away-gone\nthe answer", { agent: "opencode", workdir }));
  expect(job.status).toBe("succeeded");
  expect(await output(job)).toMatch(/could not write output\.md/);
  expect((await server.services.jobs.get(job.id)).status).toBe("succeeded");
});

describe("workdirs", () => {
  test("outside the allowed roots are refused with the field named", async () => {
    await expect(launch("x", { workdir: "/etc/corral" })).rejects.toThrowError(/outside the allowed workdir roots/);
    await expect(launch("x", { workdir: "/etc" })).rejects.toMatchObject({ field: "workdir" });
  });

  test("escaping through .. is refused", async () => {
    await expect(launch("x", { workdir: `${server.root}/../../etc/x` })).rejects.toThrowError(/outside the allowed workdir roots/);
  });

  test("~ expands to the home directory and missing dirs are created", async () => {
    const job = await finished(launch("write f.txt ok", { workdir: "~/deep/er/dir" }));
    expect(job.workdir).toBe(path.join(server.root, "deep/er/dir"));
    expect(readFileSync(path.join(job.workdir, "f.txt"), "utf8")).toBe("ok");
  });
});

test("200 jobs at once with a limit of 8 all end, and never more than 8 run", async () => {
  await server.services.agents.update("kiro", { maxConcurrent: 8 });
  let running = 0;
  let peak = 0;
  const seen = new Map<string, string>();
  const onJob = (job: Job) => {
    if (job.agent !== "kiro") return;
    const before = seen.get(job.id);
    if (before === job.status) return;
    if (job.status === "running") running++;
    if (before === "running" && isFinalStatus(job.status)) running--;
    seen.set(job.id, job.status);
    peak = Math.max(peak, running);
  };
  server.services.jobEvents.on("job", onJob);
  const jobs = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      launch(`write out-${i}.txt ${i}`, { agent: "kiro", workdir: path.join(server.root, "burst"), sharedWorkdir: true }),
    ),
  );
  const ended = await server.services.waits.waitFor(
    jobs.map((j) => j.id),
    120_000,
  );
  server.services.jobEvents.off("job", onJob);
  expect(ended.filter((j) => j.status === "succeeded")).toHaveLength(200);
  expect(peak).toBeLessThanOrEqual(8);
  expect(peak).toBeGreaterThan(1);
  for (let i = 0; i < 200; i++) expect(readFileSync(path.join(server.root, "burst", `out-${i}.txt`), "utf8")).toBe(String(i));
}, 120_000);
