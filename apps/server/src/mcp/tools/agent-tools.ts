import { isFinalStatus, type Job, type McpJobInput, McpJobInputSchema } from "@corral/shared";
import { CLIENT_INFO_META_KEY, type CallToolResult, type Implementation, type McpServer, type RegisteredTool } from "@modelcontextprotocol/server";
import { z } from "zod";
import { agentKindModule } from "../../agents/kind-lookup.js";
import { toolAgentSetting } from "../../config.js";
import { mcpActor } from "../../audit/service.js";
import type { Services } from "../../services.js";
import { inMcpNames, launchRequestOf, RARE_LAUNCH_OPTIONS } from "../launch-input.js";
import type { McpShared } from "./mcp-shared.js";
import type { ToolSet } from "../tool-agents.js";
import { type McpMount, shownOptions } from "../toolsets.js";
import { ReissuedCalls } from "./reissued-calls.js";
import { doneText, elapsed, OUTPUT_TAIL_CHARS, runText } from "./job-text.js";
import { answerLost, errorResult, guarded, keepReporting, onGivenUp, textResult, type ToolExtra } from "./results.js";
import { LAUNCHES, READS } from "./annotations.js";
import { defineTool } from "./define.js";

const DoneInputSchema = z.object({ job_id: z.string().min(1).max(200) });

/**
 * One agent's three tools, `<agent>_run`, `<agent>_run_async` and `<agent>_done`, named and
 * answering as pyCorral's callers expect. `set.tools` names them and `set.runs` is the agent they
 * launch: the same, unless a setting points pyCorral's names at another agent (`CORRAL_GEMINI_AGENT`).
 */
export function registerAgentTools(
  server: McpServer,
  services: Services,
  set: ToolSet,
  { answers, reissues, hubLinks }: McpShared,
  mount: McpMount,
): RegisteredTool[] {
  const { jobs, launches, waits, cancels, config } = services;
  const { tools: name, runs, row: agent } = set;
  // The description is that of the agent the tools run: while that one is not enabled, they are
  // described after the agent they are named after, whose description is not the one they run.
  const described = agent.name === runs && agent.description ? ` (${agent.description})` : "";
  const about = runs === name ? described : `${described} (${toolAgentSetting(name)}=${runs})`;
  const tail = (job: Job, onFailure?: () => void) => outputTail(services, job, onFailure);
  // An agent whose kind cannot continue a conversation refuses `session`: its schema does not show it.
  const resumes = agentKindModule(agent.kind)?.resumes === true;
  const rare = resumes ? RARE_LAUNCH_OPTIONS : [...RARE_LAUNCH_OPTIONS, "session" as const];
  const launch = (input: McpJobInput, extra: ToolExtra) =>
    inMcpNames(() => launches.launch(runs, launchRequestOf(input), "mcp", actor(extra).client));
  const actor = (extra: ToolExtra) => mcpActor(clientOf(server, extra));
  /**
   * The call's job: the one an identical call of the same client started and lost the answer of
   * (a re-issued call after a dropped stream), else a new one. `lost` records that this call's answer was lost.
   */
  const jobFor = async (tool: string, input: McpJobInput, extra: ToolExtra) => {
    const key = ReissuedCalls.keyOf(tool, input, callerOf(server, extra));
    const taken = reissues.take(key);
    const job = (taken && (await jobs.find(taken))) || (await launch(input, extra));
    return { job, lost: () => answerLost(extra) && reissues.lost(key, job.id) };
  };

  const run = defineTool(
    server,
    `${name}_run`,
    {
      title: `Run with ${runs}`,
      annotations: LAUNCHES,
      description: `Delegate a task to ${runs}${about} and wait for its answer.`,
      input: McpJobInputSchema,
      rare,
      shown: shownOptions(mount),
    },
    (input, extra) =>
      guarded(async () => {
        const { job, lost } = await jobFor(`${name}_run`, input, extra);
        const stopReporting = keepReporting(extra, config.progressIntervalMs, async () => {
          const now = await jobs.get(job.id);
          return { progress: (Date.now() - job.createdAt) / 1000, message: `job ${job.id} ${now.status} for ${elapsed(now)}` };
        });
        // The caller gave up: its job goes too. Nobody awaits this, so a failure is only dropped.
        const stopListening = onGivenUp(extra, () => void cancels.cancel(job.id, actor(extra)).catch(() => undefined));
        try {
          const [done] = await waits.waitFor([job.id], Number.MAX_SAFE_INTEGER, extra.mcpReq.signal);
          return await runAnswer(services, done ?? (await jobs.get(job.id)));
        } finally {
          stopReporting();
          stopListening();
          lost();
        }
      }),
  );

  const runAsync = defineTool(
    server,
    `${name}_run_async`,
    {
      title: `Start with ${runs}`,
      annotations: LAUNCHES,
      description: `Start a task on ${runs}; returns a job id for ${name}_done.`,
      input: McpJobInputSchema,
      rare,
      shown: shownOptions(mount),
    },
    (input, extra) =>
      guarded(async () => {
        const { job, lost } = await jobFor(`${name}_run_async`, input, extra);
        // Nobody waits for it: its end is pushed into a client that takes Claude Code channel events.
        hubLinks.get(extra.sessionId)?.launched(job.id);
        lost();
        return textResult(job.id);
      }),
  );

  const done = defineTool(
    server,
    `${name}_done`,
    {
      title: `Check a ${runs} job`,
      annotations: READS,
      description: `pendiente (still running), listo and its answer, or error:.`,
      input: DoneInputSchema,
    },
    ({ job_id }, extra) =>
      guarded(async () => {
        const kept = answers.get(job_id);
        if (kept !== undefined) return textResult(kept);
        let row = await services.jobs.find(job_id);
        if (!row) return errorResult(`error: job ${job_id} no encontrado`);
        const lingerMs = isFinalStatus(row.status) ? 0 : row.createdAt + config.doneLingerMs - Date.now();
        if (lingerMs > 0) row = (await waits.waitFor([job_id], lingerMs, extra.mcpReq.signal))[0] ?? row;
        // An output that could not be read this time may be readable the next: not kept.
        let readable = true;
        const text = doneText(
          row,
          tail(row, () => (readable = false)),
          await services.files.listed(job_id),
          await attemptsOf(services, row),
          await services.worktrees.change(row),
        );
        if (isFinalStatus(row.status) && readable) answers.set(job_id, text);
        return textResult(text);
      }),
  );

  return [run, runAsync, done];
}

/**
 * The client a call came from, for the audit trail: a 2026-07-28 request names it in its own
 * envelope; a 2025-11-25 session named it once, at `initialize`.
 */
export function clientOf(server: McpServer, extra: ToolExtra): { name: string; version: string } | undefined {
  const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.[CLIENT_INFO_META_KEY] as Implementation | undefined) ?? server.server.getClientVersion();
}

/**
 * Who calls again when a call's answer was lost: another client making the same call wants a job
 * of its own, not one started before it asked (nor one its cancel would stop under the first
 * client). A 2025-11-25 client calls again in its session, which outlives a dropped connection; a
 * 2026-07-28 request has no session, only the client its envelope names, so clients that name
 * themselves alike are not told apart.
 */
function callerOf(server: McpServer, extra: ToolExtra): string {
  return extra.sessionId !== undefined ? `session ${extra.sessionId}` : `client ${JSON.stringify(clientOf(server, extra) ?? null)}`;
}

/** What `<agent>_run` answers for an ended job; an MCP task of one answers the same (mcp/tasks). */
export async function runAnswer(services: Services, job: Job): Promise<CallToolResult> {
  return textResult(await runAnswerText(services, job));
}

/** The text of `<agent>_run`'s answer; `corral_run_many` answers one per job. */
export async function runAnswerText(services: Services, job: Job): Promise<string> {
  return runText(
    job,
    outputTail(services, job),
    await services.files.listed(job.id),
    await attemptsOf(services, job),
    await services.worktrees.change(job),
  );
}

/** A retried job's attempts, each told on its own line; a job tried once has none to tell. */
const attemptsOf = async (services: Services, job: Job) => (job.attempt > 1 ? services.jobs.attempts(job.id) : []);

/**
 * Read only when the text needs it: a succeeded job with an answer shows the answer instead.
 * The status comes from the registry, so an unreadable log costs the tail, not the answer.
 */
function outputTail(services: Services, job: Job, onFailure?: () => void): () => string {
  return () => {
    try {
      return services.output.outputTail(job, OUTPUT_TAIL_CHARS);
    } catch (err) {
      onFailure?.();
      return `(the output could not be read: ${err instanceof Error ? err.message : String(err)})`;
    }
  };
}
