import { randomUUID } from "node:crypto";
import path from "node:path";
import { LOCAL_RUNNER } from "@corral/shared";
import { expandHome } from "../config.js";
import type { Registry } from "../db/registry.js";
import type { RunnerRequestKind, RunnerRequestRow, RunnerRow } from "../db/schema.js";
import { ServiceError } from "../lib/errors.js";
import { isInside, selfAndAncestors } from "../lib/paths.js";
import { type AnswerOf, readAnswer } from "./runner-answers.js";
import { GIT_TIMEOUT_MS } from "../lib/git.js";
import type { WorktreeAsk } from "../review/worktree-git.js";

/** A workdir whose newest job ran on a runner: its files are on that runner's machine. */
export interface RunnerWorkdir {
  path: string;
  /** The id of the runner that ran its newest job. */
  runnerId: string;
  /** That runner's name (the panel shows it). */
  runnerName: string;
  jobs: number;
}

export interface RunnerWorkdirSettings {
  homeDir: string;
  /** A runner silent this long is not asked (CORRAL_RUNNER_LEASE_S). */
  leaseMs: number;
  /** How long a request waits for its answer (CORRAL_RUNNER_ANSWER_TIMEOUT_MS). */
  answerTimeoutMs: number;
}

/** How often a waiting request reads its row again, in case the answer's NOTIFY was missed. */
const RECHECK_MS = 500;
/** Requests older than this are swept, answered or not: nobody waits for them any more. */
const FORGET_AFTER_MS = 60_000;

/**
 * Browsing of workdirs that are on runners' machines: the server stores a request for the runner
 * (which NOTIFYs it) and waits for the answer the runner stores, told by `answered` (the server
 * LISTENs on corral_answer) or found by reading the row again. Which runner holds a path is
 * decided from the registry alone: the path must lie inside the workdir of a job a runner ran.
 */
export class RunnerWorkdirs {
  private readonly waiting = new Map<string, () => void>();
  private lastSweep = 0;

  constructor(
    private readonly registry: Pick<Registry, "jobFiles" | "runners" | "runnerRequests">,
    private readonly settings: RunnerWorkdirSettings,
  ) {}

  /**
   * The workdirs whose newest job that was taken ran on a runner (the machine its files are on):
   * all of them, or those among `paths` (reading only their jobs).
   */
  async list(paths?: string[]): Promise<RunnerWorkdir[]> {
    const newest = new Map<string, { runner: string | null; newest: number; jobs: number }>();
    for (const row of await this.registry.jobFiles.workdirRunners(paths)) {
      const seen = newest.get(row.workdir) ?? { runner: null, newest: 0, jobs: 0 };
      const jobs = seen.jobs + row.jobs;
      // Jobs still waiting for a runner (runner null) ran nowhere yet: the workdir is where its newest job that was taken ran.
      newest.set(row.workdir, row.runner !== null && row.newest > seen.newest ? { runner: row.runner, newest: row.newest, jobs } : { ...seen, jobs });
    }
    // `local`'s are the server's own: on this machine.
    const remote = [...newest].filter(
      (entry): entry is [string, { runner: string; newest: number; jobs: number }] => entry[1].runner !== null && entry[1].runner !== LOCAL_RUNNER,
    );
    if (!remote.length) return [];
    const runners = await this.registry.runners.list();
    return remote.map(([workdir, { runner, jobs }]) => ({
      path: workdir,
      runnerId: runner,
      runnerName: runners.find((r) => r.id === runner)?.name ?? runner,
      jobs,
    }));
  }

  /**
   * The runner workdir `requested` lies in (the deepest, when they nest), or null when it is not on
   * a runner. Only the path and the directories above it can contain it, so only their jobs are
   * read (workdirs are stored resolved, as resolveWorkdir gives them), never every job's.
   */
  async holding(requested: string): Promise<RunnerWorkdir | null> {
    const expanded = expandHome(requested, this.settings.homeDir);
    // A relative path is refused by the server's own checks, never resolved against its cwd here.
    if (!path.isAbsolute(expanded)) return null;
    const target = path.resolve(expanded);
    let found: RunnerWorkdir | null = null;
    for (const workdir of await this.list(selfAndAncestors(target))) {
      if (isInside(target, workdir.path) && (!found || workdir.path.length > found.path.length)) found = workdir;
    }
    return found;
  }

  /**
   * The runner to ask for a workdir: a runner that restarted is a new runner under the same name
   * on the same machine, so the newest runner of that name. Its name is what the panel shows.
   */
  private async newestNamed(name: string): Promise<RunnerRow | undefined> {
    return (await this.registry.runners.list()).filter((r) => r.name === name).at(-1);
  }

  /**
   * Asks the runner holding `workdir` and waits for its answer: a refusal it gives is thrown as
   * the server's own. A runner stopped or silent past its lease is not asked (503 at once); one
   * that does not answer in time is a 504 naming it.
   */
  async ask<K extends Exclude<RunnerRequestKind, "worktree">>(
    workdir: RunnerWorkdir,
    kind: K,
    requested: string,
    more: Partial<Pick<RunnerRequestRow, "readOffset" | "readLimit" | "range">> = {},
  ): Promise<AnswerOf[K]> {
    const asked = { what: requested, purpose: "browse this workdir", field: "path", timeoutMs: this.settings.answerTimeoutMs };
    return this.askRunner<K>(await this.newestNamed(workdir.runnerName), asked, { kind, path: requested, ...more });
  }

  /**
   * Asks the machine of the runner that made a job's worktree (`maker`, a runner id: the newest
   * runner of its name is asked) to do an action there; the answer, parsed but not yet checked
   * against the action's schema (review/worktree-git.ts does).
   */
  async askWorktree(maker: string, ask: WorktreeAsk): Promise<unknown> {
    const runners = await this.registry.runners.list();
    const name = runners.find((r) => r.id === maker)?.name;
    // A merge runs several git commands of up to GIT_TIMEOUT_MS each on the runner's machine.
    const asked = {
      what: `job ${ask.jobId}'s worktree`,
      purpose: "review it",
      field: "job_id",
      timeoutMs: Math.max(this.settings.answerTimeoutMs, 4 * GIT_TIMEOUT_MS),
    };
    return this.askRunner(name === undefined ? undefined : await this.newestNamed(name), asked, {
      kind: "worktree",
      path: ask.jobId,
      args: JSON.stringify(ask),
    });
  }

  private async askRunner<K extends RunnerRequestKind>(
    runner: RunnerRow | undefined,
    { what, purpose, field, timeoutMs }: { what: string; purpose: string; field: string; timeoutMs: number },
    request: Partial<Pick<RunnerRequestRow, "readOffset" | "readLimit" | "range" | "args">> & { kind: K; path: string },
  ): Promise<AnswerOf[K]> {
    const now = Date.now();
    const seeRunners = "see the Runners page";
    if (!runner) throw new ServiceError(`${what} is on a runner that is no longer registered; ${seeRunners}`, 503, field);
    if (runner.stoppedAt !== null) {
      throw new ServiceError(
        `${what} is on runner ${runner.name}, which is stopped; start it again on its machine (corral runner) to ${purpose} (${seeRunners})`,
        503,
        field,
      );
    }
    if (now - runner.heartbeatAt > this.settings.leaseMs) {
      throw new ServiceError(
        `${what} is on runner ${runner.name}, which has been silent for ${Math.round((now - runner.heartbeatAt) / 1000)} s (no heartbeat); is it running? ${seeRunners}`,
        503,
        field,
      );
    }
    await this.sweep(now);
    const id = randomUUID();
    try {
      await this.registry.runnerRequests.ask({
        id,
        runner: runner.id,
        readOffset: 0,
        readLimit: 0,
        range: null,
        args: null,
        askedAt: now,
        ...request,
      });
      const deadline = now + timeoutMs;
      for (;;) {
        const row = await this.registry.runnerRequests.get(id);
        if (row?.answeredAt != null) return readAnswer(row, request.kind, runner.name);
        const left = deadline - Date.now();
        if (left <= 0) break;
        // Woken by the answer's NOTIFY, or after a while in case it was missed.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(RECHECK_MS, left));
          this.waiting.set(id, () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      throw new ServiceError(
        `runner ${runner.name} did not answer in ${Math.round(timeoutMs / 100) / 10} s; is it running? ${seeRunners}`,
        504,
        field,
      );
    } finally {
      this.waiting.delete(id);
      await this.registry.runnerRequests.remove(id);
    }
  }

  /** The runner stored its answer to request `id` (heard through NOTIFY). */
  answered(id: string): void {
    this.waiting.get(id)?.();
  }

  /** Forgets requests nobody waits for any more (a server that stopped while waiting leaves its rows behind). */
  private async sweep(now: number): Promise<void> {
    if (now - this.lastSweep < FORGET_AFTER_MS / 6) return;
    this.lastSweep = now;
    await this.registry.runnerRequests.sweep(now - FORGET_AFTER_MS);
  }
}
