import { isFinalStatus } from "@corral/shared";
import { effectiveModel } from "../agents/model.js";
import { agentKindModule } from "../agents/kind-lookup.js";
import type { AppConfig } from "../config.js";
import type { JobCostPolicy } from "../costs/service.js";
import type { Repos } from "../db/registry.js";
import type { AgentRow, JobRow } from "../db/schema.js";
import { badInput, notFound, ServiceError } from "../lib/errors.js";
import { assertLaunchFits } from "./command-line.js";
import type { LaunchRequest } from "./launch-request.js";
import { resolveWorkdir } from "./workdir.js";

/** A launch that passed every check, ready to be stored. */
export interface PlannedJob {
  agent: AgentRow;
  request: LaunchRequest;
  earlier: JobRow | undefined;
  workdir: string;
  model: string | null;
}

/** What a launch's checks read besides the registry. */
export interface PlanPolicy {
  config: AppConfig;
  costs?: JobCostPolicy;
}

/** Everything a launch checks, read in the launch's transaction: what JobLaunches needs to insert the job. */
export async function planLaunch(tx: Repos, agentName: string, request: LaunchRequest, policy: PlanPolicy): Promise<PlannedJob> {
  const agent = await tx.agents.get(agentName);
  if (!agent) throw notFound(`agent ${agentName} does not exist; list agents with corral_agents or GET /api/agents`, "agent");
  if (!agent.enabled)
    throw new ServiceError(`agent ${agentName} is disabled; enable it to run jobs`, 409, "agent", undefined, "agent_disabled", {
      agent: agentName,
    });
  const earlier = request.session === undefined ? undefined : await earlierTurn(tx, agent, request.session);
  await policy.costs?.admit(agent, request.maxCostUsd ?? null, tx);
  // A follow-up runs where its conversation did (CLIs keep their sessions per project directory), with its model.
  const workdir = resolveWorkdir(request.workdir ?? earlier?.workdir ?? agent.workdir, policy.config);
  const model = request.model ?? earlier?.model ?? effectiveModel(agent, policy.config);
  if (earlier) assertSessionReachable(agent, earlier, workdir);
  assertLaunchFits(agent, { prompt: request.prompt, workdir, model }, policy.config);
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
  return { agent, request, earlier, workdir, model };
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
