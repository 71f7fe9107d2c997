import { randomBytes } from "node:crypto";
import { isFinalStatus, type JobWorktree } from "@corral/shared";
import { effectiveModel } from "../agents/model.js";
import { agentKindModule } from "../agents/kind-lookup.js";
import { type AppConfig, toolAgentSetting } from "../config.js";
import type { JobCostPolicy } from "../costs/service.js";
import type { Repos } from "../db/registry.js";
import type { AgentRow, JobRow } from "../db/schema.js";
import { badInput, notFound, ServiceError } from "../lib/errors.js";
import { assertLaunchFits } from "./command-line.js";
import type { LaunchRequest } from "./launch-request.js";
import { createWorktree, pendingWorktree, repositoryOf, worktreeMissing, worktreePathOf } from "../worktrees/git-worktree.js";
import { holdWorktree } from "../worktrees/worktree-locks.js";
import { resolveWorkdir } from "./workdir.js";

/** A launch that passed every check, ready to be stored. */
export interface PlannedJob {
  id: string;
  agent: AgentRow;
  request: LaunchRequest;
  earlier: JobRow | undefined;
  workdir: string;
  model: string | null;
  worktree: JobWorktree | null;
  /** Releases the conversation's worktree a follow-up holds until it is stored (or refused). */
  release: () => void;
}

/**
 * A worktree made for a launch before its transaction, under the job id it was made for: git can
 * take seconds on a big repository, and the registry's writer must not wait for it. The
 * transaction checks the launch again and takes it; a launch refused there removes it (launches.ts).
 */
export interface PreparedWorktree {
  id: string;
  worktree: JobWorktree;
}

const newJobId = () => randomBytes(8).toString("hex").slice(0, 12);

/** What a launch's checks read besides the registry. */
export interface PlanPolicy {
  config: AppConfig;
  costs?: JobCostPolicy;
}

/**
 * For an agent that cannot run, the settings that point pyCorral's tools at it (`CORRAL_GEMINI_AGENT`)
 * and the way back: a `gemini_run` that runs another agent says why, not only that the agent is missing.
 */
function pointedBy(agent: string, config: Pick<AppConfig, "toolAgents">): string {
  return Object.entries(config.toolAgents)
    .filter(([, runs]) => runs === agent)
    .map(([tools]) => {
      const setting = toolAgentSetting(tools);
      return ` (${setting}=${agent} makes ${tools}_run and ${tools}_run_async run it: add or enable the agent ${agent}, or unset ${setting} to run ${tools} again)`;
    })
    .join("");
}

/**
 * The new worktree a launch runs in, made outside its transaction: when the launch asks for one
 * (`worktree`), or its agent runs every job in one (the agent's `worktree`) and the launch does not
 * say `worktree: false`. A follow-up never gets a new one: it continues where its conversation ran.
 * Refusals that need git (not a repository, no such base) are said here; the rest in planLaunch.
 */
export async function prepareWorktree(
  repos: Repos,
  agentName: string,
  request: LaunchRequest,
  config: AppConfig,
): Promise<PreparedWorktree | undefined> {
  if (request.session !== undefined) return undefined;
  const agent = await repos.agents.get(agentName);
  if (!agent?.enabled || !wantsWorktree(agent, request)) return undefined;
  assertWorktreeFits(agent, request);
  const id = newJobId();
  // A runner's job: its repository is on the runner's machine, which makes the worktree when it takes the job.
  if (agent.runnerLabel !== null) return { id, worktree: pendingWorktree(id, request.base) };
  const workdir = resolveWorkdir(request.workdir ?? agent.workdir, config);
  // Beside the repository, it must still be where workers may work: checked before anything is made.
  resolveWorkdir(worktreePathOf((await repositoryOf(workdir)).top, id), config);
  return { id, worktree: await createWorktree(workdir, id, request.base) };
}

const wantsWorktree = (agent: AgentRow, request: LaunchRequest) => request.worktree ?? agent.worktree;

/** Everything a launch checks, read in the launch's transaction: what JobLaunches needs to insert the job. */
export async function planLaunch(
  tx: Repos,
  agentName: string,
  request: LaunchRequest,
  policy: PlanPolicy,
  prepared?: PreparedWorktree,
): Promise<PlannedJob> {
  const agent = await tx.agents.get(agentName);
  const pointed = pointedBy(agentName, policy.config);
  if (!agent) throw notFound(`agent ${agentName} does not exist; list agents with corral_agents or GET /api/agents${pointed}`, "agent");
  if (!agent.enabled)
    throw new ServiceError(`agent ${agentName} is disabled; enable it to run jobs${pointed}`, 409, "agent", undefined, "agent_disabled", {
      agent: agentName,
    });
  const earlier = request.session === undefined ? undefined : await earlierTurn(tx, agent, request.session);
  if (request.relaunchOf !== undefined && !(await tx.jobs.get(request.relaunchOf))) {
    throw badInput(
      `relaunchOf names job ${request.relaunchOf}, which does not exist; pass the id of the job this launch runs again, or leave it out`,
      "relaunchOf",
    );
  }
  await policy.costs?.admit(agent, request.maxCostUsd ?? null, tx);
  const onRunner = earlier?.worktree?.runner;
  if (onRunner !== undefined && agent.runnerLabel === null) {
    throw new ServiceError(
      `job ${earlier?.id}'s worktree is on the machine of runner ${onRunner}, and ${agent.name} now runs on the server: its conversation cannot go on there; launch a new job`,
      409,
      "session",
    );
  }
  // A runner's worktree is on its machine: the runner checks it when it takes the follow-up.
  const gone = earlier?.worktree?.state === "active" && onRunner === undefined ? worktreeMissing(earlier.worktree) : null;
  if (gone) throw new ServiceError(`job ${earlier?.id}: ${gone}`, 409, "session", undefined, "conflict");
  // A follow-up runs where its conversation did (CLIs keep their sessions per project directory), with its model.
  const workdir = resolveWorkdir(request.workdir ?? earlier?.workdir ?? agent.workdir, policy.config);
  const model = request.model ?? earlier?.model ?? effectiveModel(agent, policy.config);
  if (earlier) assertSessionReachable(agent, earlier, workdir);
  assertLaunchFits(agent, { prompt: request.prompt, workdir, model }, policy.config);
  const worktree = worktreeOf(agent, request, earlier, prepared);
  // The job takes the id its worktree was made for (its branch and folder are named by it).
  const id = prepared && worktree === prepared.worktree ? prepared.id : newJobId();
  // A follow-up holds its conversation's worktree until it is stored: no merge begins meanwhile.
  if (worktree) {
    const release = earlier ? holdWorktree(worktree.path, `taken by a follow-up of job ${earlier.id} being launched`, "session") : () => undefined;
    // A pending worktree has no folder yet: the job names its repository until its runner makes it.
    return { id, agent, request, earlier, workdir: worktree.state === "pending" ? workdir : worktree.path, model, worktree, release };
  }
  const busy = request.sharedWorkdir ? undefined : await tx.jobs.activeInWorkdir(workdir);
  if (busy) {
    throw new ServiceError(
      `${workdir} is in use by job ${busy.id} (${busy.agent}, ${busy.status}); use another workdir, wait for that job (corral_wait), or pass shared_workdir: true to let both write there`,
      409,
      "workdir",
      undefined,
      "workdir_busy",
      { jobId: busy.id },
    );
  }
  return { id, agent, request, earlier, workdir, model, worktree: null, release: () => undefined };
}

/**
 * The job's worktree: the one prepared for it (`worktree: true`, or the agent's default), or for a
 * follow-up its conversation's, which must still be there. It is the job's own: no other job can
 * be busy in it.
 */
function worktreeOf(
  agent: AgentRow,
  request: LaunchRequest,
  earlier: JobRow | undefined,
  prepared: PreparedWorktree | undefined,
): JobWorktree | null {
  if (earlier) {
    if (request.base !== undefined) throw badInput("a follow-up continues where its conversation ran: leave out base", "base");
    if (request.worktree !== undefined && request.worktree !== (earlier.worktree !== null)) {
      throw badInput(
        earlier.worktree
          ? `job ${earlier.id} ran in a worktree, and its follow-up continues there: leave out worktree`
          : `job ${earlier.id} ran in its workdir, and its follow-up continues there: leave out worktree, or launch a new job with it`,
        "worktree",
      );
    }
    if (!earlier.worktree) return null;
    if (earlier.worktree.state !== "active") {
      throw new ServiceError(
        `job ${earlier.id}'s worktree was ${earlier.worktree.state}; its conversation cannot go on there, so launch a new job${
          earlier.worktree.state === "archived" ? ` (base ${earlier.worktree.branch} starts from its branch)` : ""
        }`,
        409,
        "session",
      );
    }
    return earlier.worktree;
  }
  if (!wantsWorktree(agent, request)) {
    if (request.base !== undefined) throw badInput("base names where a worktree starts: pass worktree: true with it", "base");
    return null;
  }
  assertWorktreeFits(agent, request);
  if (!prepared) {
    throw new ServiceError(
      `agent ${agent.name}'s worktree setting changed while this launch was checked; launch again`,
      409,
      "worktree",
      undefined,
      "conflict",
    );
  }
  return prepared.worktree;
}

/** A worktree job runs alone in its worktree. */
function assertWorktreeFits(agent: AgentRow, request: LaunchRequest): void {
  if (request.sharedWorkdir) throw badInput("a worktree is the job's own: leave out shared_workdir, or pass worktree: false", "worktree");
}

/**
 * The earlier job a follow-up continues (`session`), refused with the reason unless its
 * conversation can really be continued: a follow-up never quietly starts afresh. A job still
 * queued or running has no finished turn to continue yet, so it is refused too (wait for it).
 */
export async function earlierTurn(tx: Repos, agent: AgentRow, session: string): Promise<JobRow> {
  const earlier = await tx.jobs.get(session);
  if (!earlier) throw notFound(`job ${session} not found; pass the id of an earlier ${agent.name} job as session`, "session");
  if (earlier.agent !== agent.name) {
    throw badInput(`job ${session} ran on ${earlier.agent}, not ${agent.name}; a follow-up continues a conversation with the same agent`, "session");
  }
  const kind = agentKindModule(agent.kind);
  if (!kind?.resumes) {
    throw badInput(
      `${agent.name} cannot continue a conversation (Corral has no way to resume a ${agent.kind} worker's session); launch without session to start a new one`,
      "session",
    );
  }
  const conflict = (why: string) => new ServiceError(`job ${session} ${why}`, 409, "session", undefined, "conflict", { jobId: session });
  if (!isFinalStatus(earlier.status)) {
    throw conflict(`is still ${earlier.status}; wait for it to end (corral_wait or ${agent.name}_done), then follow it up`);
  }
  const never = earlier.startedAt === null ? `it never started (${earlier.status})` : null;
  // A worker that names its session (a CLI, a running OpenCode server) is resumed there; an
  // in-process loop without one (Ollama) sends the history kept in the registry.
  if (earlier.workerSession !== null) return earlier;
  if ("cli" in kind) {
    throw conflict(`has no worker session to resume: ${never ?? `its worker reported no session id (${earlier.status})`}`);
  }
  if (!(await tx.jobMessages.began(earlier.id))) {
    throw conflict(`has no conversation to continue: ${never ?? `its worker never reached the model (${earlier.status})`}`);
  }
  return earlier;
}

/**
 * A CLI that keeps its sessions per working directory finds the earlier turn's session only where
 * that turn ran; elsewhere it fails (Claude Code, Gemini CLI) or waits until the job's timeout
 * (OpenCode), so another workdir is refused before anything runs.
 */
function assertSessionReachable(agent: AgentRow, earlier: JobRow, workdir: string): void {
  const kind = agentKindModule(agent.kind);
  if (!kind || !("cli" in kind) || kind.cli.resumesAnywhere || workdir === earlier.workdir) return;
  throw badInput(
    `${agent.kind} keeps job ${earlier.id}'s session in ${earlier.workdir} and finds it only there; leave workdir out to follow up in that directory`,
    "workdir",
  );
}
