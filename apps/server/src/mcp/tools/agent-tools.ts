import { isFinalStatus, type Job, type McpJobInput, McpJobInputSchema } from "@corral/shared";
import { z } from "zod";
import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { agentKindModule } from "../../agents/kind-lookup.js";
import type { AgentRow } from "../../db/schema.js";
import { mcpActor } from "../../audit/service.js";
import type { Services } from "../../services.js";
import { inMcpNames, launchRequestOf } from "../launch-input.js";
import type { EndedAnswers } from "./ended-answers.js";
import { doneText, elapsed, OUTPUT_TAIL_CHARS, runText } from "./job-text.js";
import { errorResult, guarded, keepReporting, onGivenUp, textResult } from "./results.js";
import { LAUNCHES, READS } from "./annotations.js";

/** One agent's three tools, `<agent>_run`, `<agent>_run_async` and `<agent>_done`, named and answering as pyCorral's callers expect. */
export function registerAgentTools(server: McpServer, services: Services, agent: AgentRow, answers: EndedAnswers): RegisteredTool[] {
  const { jobs, launches, waits, cancels, config } = services;
  const name = agent.name;
  const about = agent.description ? ` (${agent.description})` : "";
  const tail = (job: Job, onFailure?: () => void) => outputTail(services, job, onFailure);
  // How to follow up, told where the job id is handed out; agents whose kind cannot resume say so instead.
  const followUp = agentKindModule(agent.kind)?.resumes
    ? `Once the job has ended, pass its id as \`session\` to ${name}_run or ${name}_run_async to follow up: the worker continues that conversation with its context (same workdir and model unless given).`
    : `${name} cannot continue a conversation: \`session\` is refused.`;
  /** The session's client, for the audit trail (known once `initialize` is done). */
  const actor = () => mcpActor(server.server.getClientVersion());
  const launch = (input: McpJobInput) => inMcpNames(() => launches.launch(name, launchRequestOf(input), "mcp", actor().client));

  const run = server.registerTool(
    `${name}_run`,
    {
      title: `Run with ${name}`,
      annotations: LAUNCHES,
      description: `Run a task with ${name}${about} and wait for it to finish. The answer begins with "ok" or "error", then details (the "job <id>" line), files and the output's tail. For long tasks prefer ${name}_run_async. ${followUp}`,
      inputSchema: McpJobInputSchema.shape,
    },
    (input, extra) =>
      guarded(async () => {
        const job = await launch(input);
        const stopReporting = keepReporting(extra, config.progressIntervalMs, async () => {
          const now = await jobs.get(job.id);
          return { progress: (Date.now() - job.createdAt) / 1000, message: `job ${job.id} ${now.status} for ${elapsed(now)}` };
        });
        // The caller gave up: its job goes too. Nobody awaits this, so a failure is only dropped.
        const stopListening = onGivenUp(extra, () => void cancels.cancel(job.id, actor()).catch(() => undefined));
        try {
          const [done] = await waits.waitFor([job.id], Number.MAX_SAFE_INTEGER, extra.signal);
          return await runAnswer(services, done ?? (await jobs.get(job.id)));
        } finally {
          stopReporting();
          stopListening();
        }
      }),
  );

  const runAsync = server.registerTool(
    `${name}_run_async`,
    {
      title: `Start with ${name}`,
      annotations: LAUNCHES,
      description: `Start a task with ${name}${about} in the background. Returns only the job id; check it with ${name}_done or wait for several with corral_wait. ${followUp}`,
      inputSchema: McpJobInputSchema.shape,
    },
    (input) => guarded(async () => textResult((await launch(input)).id)),
  );

  const done = server.registerTool(
    `${name}_done`,
    {
      title: `Check a ${name} job`,
      annotations: READS,
      description: `Check a ${name} job. The answer begins with "pendiente" (still running), "listo" (finished), or "error: " (failed, with exit code and output tail).`,
      inputSchema: { job_id: z.string().min(1).max(200).describe(`The id returned by ${name}_run_async`) },
    },
    ({ job_id }) =>
      guarded(async () => {
        const kept = answers.get(job_id);
        if (kept !== undefined) return textResult(kept);
        const row = await services.jobs.find(job_id);
        if (!row) return errorResult(`error: job ${job_id} no encontrado`);
        // An output that could not be read this time may be readable the next: not kept.
        let readable = true;
        const text = doneText(
          row,
          tail(row, () => (readable = false)),
          await services.files.listed(job_id),
          await attemptsOf(services, row),
        );
        if (isFinalStatus(row.status) && readable) answers.set(job_id, text);
        return textResult(text);
      }),
  );

  return [run, runAsync, done];
}

/** What `<agent>_run` answers for an ended job; an MCP task of one answers the same (mcp/tasks). */
export async function runAnswer(services: Services, job: Job): Promise<CallToolResult> {
  return textResult(await runAnswerText(services, job));
}

/** The text of `<agent>_run`'s answer; `corral_run_many` answers one per job. */
export async function runAnswerText(services: Services, job: Job): Promise<string> {
  return runText(job, outputTail(services, job), await services.files.listed(job.id), await attemptsOf(services, job));
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
