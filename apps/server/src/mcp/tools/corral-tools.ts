import { HubAgentsInputSchema, isFinalStatus, JobStatusSchema } from "@corral/shared";
import type { McpServer } from "@modelcontextprotocol/server";
import { defineTool } from "./define.js";
import { z } from "zod";
import { mcpActor } from "../../audit/service.js";
import type { Services } from "../../services.js";
import { hubAgentLines } from "./hub-tools.js";
import { jobLine, lastLines, statusWord, waitLines } from "./job-text.js";
import { clientOf } from "./agent-tools.js";
import { guarded, keepReporting, textResult } from "./results.js";
import { CANCELS, READS } from "./annotations.js";

const JobIdArg = z.string().min(1).max(200);
/** `corral_logs` defaults: lines as `docker logs --tail` counts them, and a cap on their characters. */
const LOG_TAIL_LINES = 100;
const LOG_MAX_CHARS = 20_000;

const CorralAgentsInput = z.object({ session: HubAgentsInputSchema.shape.session.optional() });

const CorralJobsInput = z.object({
  agent: z.string().min(1).max(40).optional().describe("Only this agent's jobs"),
  status: JobStatusSchema.optional().describe("Only jobs in this status"),
  limit: z.number().int().min(1).max(200).default(20),
});

const CorralWaitInput = z.object({
  job_ids: z.array(JobIdArg).min(1).max(100),
  timeout_s: z.number().int().min(1).max(3600).default(600),
});

const CorralCancelInput = z.object({ job_id: JobIdArg });

const CorralLogsInput = z.object({
  job_id: JobIdArg,
  tail: z.number().int().min(1).max(100_000).optional().describe(`Last lines (default ${LOG_TAIL_LINES})`),
  max_chars: z.number().int().min(1).max(200_000).optional().describe(`Cap (default ${LOG_MAX_CHARS})`),
  cursor: z.number().int().min(0).optional().describe("Page from here (0: start)"),
});

/** Tools about Corral itself, on the `/mcp` mount only. */
export function registerCorralTools(server: McpServer, services: Services): void {
  registerAgentsTool(server, services);
  registerJobsTool(server, services);
  registerWaitTool(server, services);
  registerCancelTool(server, services);
  registerLogsTool(server, services);
}

/** The agents and whether each can run now; with a session, that session's agents instead. */
function registerAgentsTool(server: McpServer, services: Services): void {
  const { agents, conversations } = services;
  defineTool(
    server,
    "corral_agents",
    {
      title: "List agents",
      annotations: READS,
      description: "Agents to delegate to and whether each can run now; with session, that hub session's.",
      input: CorralAgentsInput,
    },
    ({ session }) =>
      guarded(async () => {
        if (session !== undefined) return textResult(hubAgentLines(session, await conversations.agents(session)));
        const list = await agents.withAvailability(await agents.list());
        const lines = list.map((a) => {
          const state = !a.enabled ? "disabled" : a.availability.available ? "available" : `unavailable: ${a.availability.hint}`;
          return `${a.name} (${a.kind}) · model ${a.effectiveModel ?? "default"} · workdir ${a.workdir} · timeout ${a.timeoutS} s · max ${a.maxConcurrent} at once · ${state}`;
        });
        return textResult(lines.join("\n") || "no agents");
      }),
  );
}

/** Recent jobs, one line each. */
function registerJobsTool(server: McpServer, services: Services): void {
  const { jobs } = services;
  defineTool(
    server,
    "corral_jobs",
    {
      title: "List jobs",
      annotations: READS,
      description: "Recent jobs, newest first.",
      input: CorralJobsInput,
    },
    ({ agent, status, limit }) =>
      guarded(async () => {
        const { jobs: list, total } = await jobs.list({ agent, status: status ? [status] : undefined, limit, offset: 0 });
        const files = await services.files.counts(list.map((j) => j.id));
        const lines = list.map((j) => jobLine(j, files.get(j.id)));
        return textResult([`${total} job(s)${total > list.length ? `, newest ${list.length} shown` : ""}`, ...lines].join("\n"));
      }),
  );
}

/** Blocks until jobs end, reporting progress meanwhile. */
function registerWaitTool(server: McpServer, services: Services): void {
  const { jobs, waits, config } = services;
  defineTool(
    server,
    "corral_wait",
    {
      title: "Wait for jobs",
      annotations: READS,
      description: "Wait until jobs end (or the timeout), not polling: a line per job, with its files.",
      input: CorralWaitInput,
    },
    ({ job_ids, timeout_s }, extra) =>
      guarded(async () => {
        for (const id of job_ids) await jobs.get(id);
        const started = Date.now();
        const stopReporting = keepReporting(extra, config.progressIntervalMs, async () => {
          const ended = (await Promise.all(job_ids.map((id) => jobs.get(id)))).filter((job) => isFinalStatus(job.status)).length;
          return {
            progress: ended,
            total: job_ids.length,
            message: `${ended}/${job_ids.length} ended after ${Math.round((Date.now() - started) / 1000)} s`,
          };
        });
        try {
          const result = await waits.waitFor(job_ids, timeout_s * 1000, extra.mcpReq.signal);
          const pending = result.filter((j) => !isFinalStatus(j.status)).length;
          const head = pending ? `${pending} of ${result.length} still running after ${timeout_s} s` : `all ${result.length} ended`;
          const files = await Promise.all(result.map((j) => services.files.listed(j.id)));
          const changes = await Promise.all(result.map((j) => services.worktrees.change(j)));
          return textResult([head, ...result.flatMap((j, i) => waitLines(j, files[i] ?? { files: [], cutAt: null }, changes[i]))].join("\n"));
        } finally {
          stopReporting();
        }
      }),
  );
}

/** Stops a job and its process group. */
function registerCancelTool(server: McpServer, services: Services): void {
  const { cancels } = services;
  defineTool(
    server,
    "corral_cancel",
    {
      title: "Cancel a job",
      annotations: CANCELS,
      description: "Cancel a job and every process it started.",
      input: CorralCancelInput,
    },
    ({ job_id }, extra) =>
      guarded(async () => {
        const job = await cancels.cancel(job_id, mcpActor(clientOf(server, extra)));
        return textResult(`${job.id}: ${job.status === "cancelled" ? "cancelled" : `already ended (${statusWord(job)})`}`);
      }),
  );
}

/** A job's output: its last lines, or a page from a cursor. */
function registerLogsTool(server: McpServer, services: Services): void {
  const { jobs, output } = services;
  defineTool(
    server,
    "corral_logs",
    {
      title: "Read a job's log",
      annotations: READS,
      description: "A job's output (logs): its last lines, or a page from a cursor.",
      input: CorralLogsInput,
    },
    ({ job_id, tail, max_chars, cursor }) =>
      guarded(async () => {
        const job = await jobs.get(job_id);
        if (cursor === undefined) {
          const maxChars = max_chars ?? LOG_MAX_CHARS;
          const text = output.outputTail(job, maxChars);
          // outputTail marks a cut with a leading "…", one character past the cap.
          const shown = lastLines(text, tail ?? LOG_TAIL_LINES, text.length > maxChars);
          return textResult(`${jobLine(job)}\n${shown || "(no output yet)"}`);
        }
        const page = await output.readOutput(job_id, cursor, 64 * 1024);
        const text = page.chunks.map((c) => c.text).join("");
        const end = page.complete ? "end of output" : `next cursor: ${page.cursor}`;
        return textResult(`${text}\n--- ${end} ---`);
      }),
  );
}
