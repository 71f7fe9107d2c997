import { describe, expect, it } from "vitest";
import type { AgentWithAvailability, Job } from "@corral/shared";
import { emptyForm, launchBody, launchManyBody } from "./launch-form.js";
import { relaunchBody, replyBody } from "./relaunch.js";
import { replyBlocked } from "./thread.js";

function job(patch: Partial<Job> = {}): Job {
  return {
    id: "abc123def456",
    agent: "gemini",
    status: "succeeded",
    prompt: "first",
    workdir: "/w",
    model: "m1",
    timeoutS: 600,
    origin: "panel",
    invocation: { command: "/usr/bin/gemini", args: [], cwd: "/w" },
    pid: null,
    exitCode: 0,
    error: null,
    finalText: null,
    outputBytes: 0,
    usage: { model: null, inputTokens: null, outputTokens: null, cachedInputTokens: null, costUsd: null, costSource: null },
    attempt: 1,
    retry: null,
    provider: "google",
    limits: { maxCostUsd: null, maxTokens: null },
    createdAt: 0,
    startedAt: 1,
    endedAt: 2,
    cancel: null,
    killedAt: null,
    conversationId: "abc123def456",
    followUpOf: null,
    relaunchOf: null,
    workerSession: "s-1",
    worktree: null,
    groupId: null,
    runner: null,
    ...patch,
  };
}

const agent = (resumes: boolean) => ({ name: "gemini", resumes }) as AgentWithAvailability;

describe("a thread's Reply", () => {
  it("goes to the last job, whose workdir and model the server keeps", () => {
    expect(replyBody(job(), "next")).toEqual({ agent: "gemini", prompt: "next", session: "abc123def456" });
  });

  it("says why it cannot be sent: a kind that cannot resume, a turn still running, one that never started, a CLI that reported no session", () => {
    expect(replyBlocked(job(), agent(true))).toBeNull();
    // An in-process worker (no command line) keeps its messages instead of a session id.
    expect(replyBlocked(job({ invocation: null, workerSession: null }), agent(true))).toBeNull();
    expect(replyBlocked(job(), agent(false))).toMatch(/^gemini cannot take follow-ups/);
    expect(replyBlocked(job({ status: "running", endedAt: null }), agent(true))).toMatch(/^Reply once job abc123def456 has ended/);
    expect(replyBlocked(job({ status: "cancelled", startedAt: null, invocation: null }), agent(true))).toMatch(/never started/);
    expect(replyBlocked(job({ workerSession: null }), agent(true))).toMatch(/reported no session/);
  });
});

describe("relaunching a worktree job", () => {
  const worktree = {
    repo: "/repo",
    gitDir: "/repo/.git",
    path: "/.corral-worktrees/repo/abc123def456",
    branch: "corral/abc123def456",
    base: "main",
    baseCommit: "0".repeat(40),
    state: "merged" as const,
  };
  it("runs again in a new worktree of its repository from the same base, and a follow-up in its conversation's", () => {
    const again = relaunchBody(job({ worktree, workdir: worktree.path }));
    expect(again).toMatchObject({ workdir: "/repo", worktree: true, base: "main" });
    const followUp = relaunchBody(job({ worktree, workdir: worktree.path, followUpOf: "000000aaaaaa" }));
    expect(followUp).toMatchObject({ session: "000000aaaaaa" });
    expect(followUp.workdir).toBeUndefined();
  });
});

describe("relaunching a job with limits", () => {
  it("keeps its cost and token limits, and sets none it did not have", () => {
    expect(relaunchBody(job({ limits: { maxCostUsd: 0.25, maxTokens: 5000 } }))).toMatchObject({ maxCostUsd: 0.25, maxTokens: 5000 });
    const none = relaunchBody(job({ limits: { maxCostUsd: null, maxTokens: null } }));
    expect(none.maxCostUsd).toBeUndefined();
    expect(none.maxTokens).toBeUndefined();
  });
});

describe("a relaunch records the job it ran again", () => {
  it("from the button and from the form opened with its inputs; a launch to several does not", () => {
    expect(relaunchBody(job()).relaunchOf).toBe(job().id);
    const form = { ...emptyForm, agent: "gemini", prompt: "again" };
    const built = launchBody(form, [], "000000aaaaaa");
    expect("body" in built && built.body.relaunchOf).toBe("000000aaaaaa");
    const fresh = launchBody(form);
    expect("body" in fresh && fresh.body).not.toHaveProperty("relaunchOf");
    const many = launchManyBody({ ...form, many: true, agents: ["gemini", "codex"] });
    expect("body" in many && many.body).not.toHaveProperty("relaunchOf");
  });
});

describe("relaunching a follow-up", () => {
  it("continues the same earlier turn, from the button and from the form", () => {
    expect(relaunchBody(job({ followUpOf: "000000aaaaaa" })).session).toBe("000000aaaaaa");
    expect(relaunchBody(job()).session).toBeUndefined();
    const built = launchBody({ ...emptyForm, agent: "gemini", prompt: "again", session: "000000aaaaaa" });
    expect("body" in built && built.body.session).toBe("000000aaaaaa");
  });
});
