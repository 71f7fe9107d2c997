import { describe, expect, it } from "vitest";
import type { AgentWithAvailability, Job, JobAttempt } from "@corral/shared";
import { formatWhen, jobTabTitle } from "../format/format.js";
import { commandCard } from "./job-command.js";
import { timelineSteps } from "./job-timeline.js";

const t0 = new Date(2026, 10, 30, 14, 3, 5).getTime();

function job(patch: Partial<Job> = {}): Job {
  return {
    id: "abc123def456",
    agent: "gemini",
    status: "running",
    prompt: "print 1",
    workdir: "/w",
    model: null,
    timeoutS: 600,
    origin: "panel",
    invocation: { command: "/usr/bin/gemini", args: ["--prompt=it's"], cwd: "/w" },
    pid: 4242,
    exitCode: null,
    error: null,
    finalText: null,
    outputBytes: 0,
    usage: { model: null, inputTokens: null, outputTokens: null, cachedInputTokens: null, costUsd: null, costSource: null },
    attempt: 1,
    retry: null,
    provider: "google",
    limits: { maxCostUsd: null, maxTokens: null },
    createdAt: t0,
    startedAt: t0 + 1000,
    endedAt: null,
    cancel: null,
    killedAt: null,
    conversationId: "abc123def456",
    followUpOf: null,
    relaunchOf: null,
    workerSession: null,
    worktree: null,
    groupId: null,
    runner: null,
    ...patch,
  };
}

function agent(availability: Partial<AgentWithAvailability["availability"]>, patch: Partial<AgentWithAvailability> = {}): AgentWithAvailability {
  return {
    name: "gemini",
    kind: "gemini",
    builtin: true,
    readable: true,
    answerIsOutput: false,
    resumes: false,
    effectiveModel: null,
    createdAt: 0,
    updatedAt: 0,
    provider: "google",
    model: null,
    workdir: "/w",
    timeoutS: 600,
    maxConcurrent: 4,
    env: {},
    enabled: true,
    command: null,
    args: null,
    baseUrl: null,
    description: "",
    retry: null,
    sandbox: "none",
    worktree: false,
    api: null,
    apiKeyEnv: null,
    role: null,
    tools: null,
    allowedHosts: null,
    maxSteps: null,
    permissions: null,
    runnerLabel: null,
    sessions: [],
    source: "registry",
    availability: { available: true, resolved: "/usr/bin/gemini", hint: null, version: null, ...availability },
    ...patch,
  };
}

describe("when things happened", () => {
  it("says today or yesterday with the time, else the date", () => {
    const now = new Date(2026, 10, 30, 18, 0).getTime();
    expect(formatWhen(t0, now)).toMatch(/^today \d/);
    expect(formatWhen(new Date(2026, 10, 29, 23, 59).getTime(), now)).toMatch(/^yesterday \d/);
    const older = formatWhen(new Date(2026, 10, 12, 9, 0).getTime(), now);
    expect(older).toMatch(/12/);
    expect(older).not.toMatch(/2026|today|yesterday/);
    // Another year names it; a day just after midnight is still "yesterday" for the day before.
    expect(formatWhen(new Date(2025, 11, 31, 9, 0).getTime(), now)).toMatch(/2025/);
    expect(formatWhen(new Date(2026, 10, 29, 0, 0).getTime(), new Date(2026, 10, 30, 0, 1).getTime())).toMatch(/^yesterday /);
  });
});

describe("the tab title", () => {
  it("leads with the job's status", () => {
    expect(jobTabTitle({ id: "abc", status: "succeeded" })).toBe("✓ succeeded · abc · Corral");
    expect(jobTabTitle({ id: "abc", status: "timed_out" })).toBe("⏱ timed out · abc · Corral");
  });
});

describe("the timeline", () => {
  it("records who cancelled, when, and the SIGKILL it came to", () => {
    const steps = timelineSteps(
      job({
        status: "cancelled",
        endedAt: t0 + 9000,
        cancel: { at: t0 + 5000, by: "mcp", client: "claude-code/2.1.3" },
        killedAt: t0 + 8000,
      }),
    );
    expect(steps.map((s) => [s.key, s.at])).toEqual([
      ["queued", t0],
      ["started", t0 + 1000],
      ["cancel", t0 + 5000],
      ["killed", t0 + 8000],
      ["ended", t0 + 9000],
    ]);
    expect(steps[2]?.note).toBe("over MCP (claude-code/2.1.3)");
    expect(steps[3]?.label).toContain("SIGKILL");
    // A cancel is a warning, not a failure.
    expect(steps[4]?.tone).toBe("warn");
  });

  it("names each door, and the panel once", () => {
    const by = (cancel: Job["cancel"]) => timelineSteps(job({ cancel })).find((s) => s.key === "cancel")?.note;
    expect(by({ at: t0, by: "panel", client: "panel" })).toBe("from the panel");
    expect(by({ at: t0, by: "rest", client: "curl/8.5.0" })).toBe("through the REST API (curl/8.5.0)");
    expect(by({ at: t0, by: "server", client: null })).toBe("by the server as it stopped");
  });

  it("a runner's job says which runner its pid belongs to", () => {
    const started = (patch: Partial<Job>) => timelineSteps(job(patch)).find((s) => s.key === "started")?.note;
    expect(started({ pid: 4242, runner: "gpu-box-1a2b3c4d" })).toBe("pid 4242 · on runner gpu-box-1a2b3c4d");
    expect(started({ pid: 4242, runner: null })).toBe("pid 4242");
    // The server's own jobs are runner local's: every job of a single-machine install, which never mentions runners.
    expect(started({ pid: 4242, runner: "local" })).toBe("pid 4242");
    // By the name its machine announced, once the runners are read.
    const named = timelineSteps(job({ pid: 4242, runner: "vm-1a2b3c4d" }), "gpu-box").find((s) => s.key === "started")?.note;
    expect(named).toBe("pid 4242 · on runner gpu-box");
  });

  it("an in-process agent's job says no exit code: it had no process", () => {
    const ended = (patch: Partial<Job>) =>
      timelineSteps(job({ status: "succeeded", endedAt: t0 + 10, exitCode: 0, ...patch })).find((s) => s.key === "ended")?.note;
    expect(ended({})).toBe("exit code 0");
    expect(ended({ pid: null, invocation: null })).toBeUndefined();
    const started = timelineSteps(job({ pid: null, invocation: null, runner: "local" })).find((s) => s.key === "started")?.note;
    expect(started).toBe("in-process");
  });

  it("a retried job has a step per attempt at its own start, with its own end, error and usage", () => {
    const usage = (inputTokens: number, costUsd: number) => ({
      ...job().usage,
      inputTokens,
      outputTokens: 2,
      costUsd,
      costSource: "estimated" as const,
    });
    const attempt = (n: number, patch: Partial<JobAttempt>): JobAttempt => ({
      attempt: n,
      status: "failed",
      exitCode: 1,
      error: `exit code 1\nboom ${n}`,
      startedAt: t0 + n * 10_000,
      endedAt: t0 + n * 10_000 + 3000,
      outputStart: 0,
      outputEnd: 0,
      usage: usage(1200, 0.0036),
      ...patch,
    });
    const attempts = [attempt(1, {}), attempt(2, {}), attempt(3, { status: "succeeded", exitCode: 0, error: null, usage: usage(2500, 0.01) })];
    const retried = job({ status: "succeeded", attempt: 3, exitCode: 0, pid: 99, startedAt: t0 + 10_000, endedAt: t0 + 33_500 });
    const steps = timelineSteps(retried, null, attempts);
    expect(steps.map((s) => [s.key, s.label, s.at, s.tone])).toEqual([
      ["queued", "queued", t0, undefined],
      ["attempt-1", "attempt 1 failed", t0 + 10_000, "bad"],
      ["attempt-2", "attempt 2 failed", t0 + 20_000, "bad"],
      ["attempt-3", "attempt 3 succeeded", t0 + 30_000, "ok"],
      ["ended", "succeeded", t0 + 33_500, "ok"],
    ]);
    expect(steps[1]?.note).toBe("ran 3s · exit code 1 · boom 1 · 1.2k in / 2 out · $0.0036");
    expect(steps[2]?.note).toBe("ran 3s · exit code 1 · boom 2 · 1.2k in / 2 out · $0.0036");
    expect(steps[3]?.note).toBe("pid 99 · ran 3s · exit code 0 · 2.5k in / 2 out · $0.010");
    // The job's time runs from its first attempt's start.
    expect(steps[4]?.note).toBe("exit code 0 · took 23s over 3 attempts");
  });

  it("a job that never started has no start, and says so at its end", () => {
    const steps = timelineSteps(job({ status: "failed", startedAt: null, pid: null, invocation: null, endedAt: t0 + 10 }));
    expect(steps.map((s) => s.key)).toEqual(["queued", "ended"]);
    expect(steps[1]?.note).toBe("its worker never started");
  });

  it("ends a worktree job's story with what became of its branch: merged, discarded or archived, when it was", () => {
    const wt = (patch: Partial<NonNullable<Job["worktree"]>>): Job["worktree"] => ({
      repo: "/w",
      gitDir: "/w/.git",
      path: "/w.corral/abc123def456",
      branch: "corral/abc123def456",
      base: "main",
      baseCommit: "0123456789ab",
      state: "active",
      ...patch,
    });
    const ended = (worktree: Job["worktree"]) => timelineSteps(job({ status: "succeeded", endedAt: t0 + 9000, exitCode: 0, worktree }));
    const last = (worktree: Job["worktree"]) => ended(worktree).at(-1);

    expect(ended(wt({})).map((s) => s.key)).toEqual(["queued", "started", "ended"]);
    expect(last(wt({ state: "merged", changedAt: t0 + 60_000, head: "feedface1234567890" }))).toEqual({
      key: "worktree",
      label: "merged into main",
      at: t0 + 60_000,
      note: "branch corral/abc123def456 and its worktree removed",
      tone: "ok",
    });
    expect(last(wt({ state: "discarded", changedAt: t0 + 70_000, head: "1a2b3c4d5e6f7a8b9c0d" }))).toMatchObject({
      label: "discarded",
      at: t0 + 70_000,
      note: "branch corral/abc123def456 and its worktree removed without merging; it pointed at 1a2b3c4d5e6f",
      tone: "warn",
    });
    expect(last(wt({ state: "discarded", changedAt: t0 + 70_000, head: null }))?.note).toBe(
      "branch corral/abc123def456 and its worktree removed without merging",
    );
    const archived = last(wt({ state: "archived", changedAt: t0 + 80_000, head: null }));
    expect(archived).toMatchObject({ label: "worktree archived, branch kept", at: t0 + 80_000 });
    expect(archived?.tone).toBeUndefined();
    // A record from before the date was kept has no step: there is no moment to put it at.
    expect(ended(wt({ state: "merged" })).map((s) => s.key)).toEqual(["queued", "started", "ended"]);
  });
});

describe("the Command card", () => {
  it("shows the command line as it ran, quoted for a shell", () => {
    expect(commandCard(job(), agent({}))).toEqual({ kind: "command", line: `/usr/bin/gemini '--prompt=it'\\''s'`, cwd: "/w" });
  });

  it("says a queued job has not started, and why it will not when its CLI is missing", () => {
    const queued = job({ status: "queued", startedAt: null, pid: null, invocation: null });
    expect(commandCard(queued, agent({}))).toEqual({ kind: "waiting", unavailable: null });
    const hint = "gemini was not found on PATH; install it (npm install -g @google/gemini-cli) or set CORRAL_GEMINI_BIN to its path";
    expect(commandCard(queued, agent({ available: false, resolved: null, hint }))).toEqual({ kind: "waiting", unavailable: hint });
  });

  it("a CLI that is not installed is not called in-process", () => {
    const hint = "gemini was not found on PATH; install it (…) or set CORRAL_GEMINI_BIN to its path";
    const failed = job({ status: "failed", startedAt: null, pid: null, invocation: null, endedAt: t0, error: hint });
    const card = commandCard(failed, agent({ available: false, resolved: null, hint }));
    expect(card.kind).toBe("not-started");
    expect(card).toMatchObject({ hint });
    expect(JSON.stringify(card)).not.toMatch(/in-process|inside/);
    // Installed since: the card does not claim it is missing, and points at the job's own error.
    expect(commandCard(failed, agent({}))).toMatchObject({ kind: "not-started", hint: null });
  });

  it("a job cancelled before it started ran no command", () => {
    const cancelled = job({ status: "cancelled", startedAt: null, pid: null, invocation: null, endedAt: t0 });
    expect(commandCard(cancelled, agent({}))).toMatchObject({ kind: "not-started", reason: "It was cancelled before its worker started." });
  });

  it("an in-process agent (Ollama) ran without a command line, against its server", () => {
    const ollama = agent({ resolved: "http://127.0.0.1:11434" }, { name: "qwen", kind: "ollama", baseUrl: "http://gpu:11434" });
    const ran = job({ agent: "qwen", status: "succeeded", pid: null, invocation: null, endedAt: t0 + 5000, exitCode: 0 });
    expect(commandCard(ran, ollama)).toEqual({ kind: "in-process", server: "http://gpu:11434" });
    expect(timelineSteps(ran).find((s) => s.key === "started")?.note).toBe("in-process");
  });
});
