import { HubAgentsInputSchema, isFinalStatus, JobStatusSchema } from "@corral/shared";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { mcpActor } from "../../audit/service.js";
import type { Services } from "../../services.js";
import { hubAgentLines } from "./hub-tools.js";
import { jobLine, lastLines, statusWord, waitLines } from "./job-text.js";
import { guarded, keepReporting, textResult } from "./results.js";
import { CANCELS, READS } from "./annotations.js";

const JobIdArg = z.string().min(1).max(200);
/** `corral_logs` defaults: lines as `docker logs --tail` counts them, and a cap on their characters. */
const LOG_TAIL_LINES = 100;
const LOG_MAX_CHARS = 20_000;

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
  server.registerTool(
    "corral_agents",
    {
      title: "List agents",
      annotations: READS,
      description:
        "List the agents Corral can delegate to: kind, model, workdir, limits and whether each is available now. With a session: that session's agents (registered clients and Corral's agents), each online or not.",
      inputSchema: { session: HubAgentsInputSchema.shape.session.optional() },
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
  server.registerTool(
    "corral_jobs",
    {
      title: "List jobs",
      annotations: READS,
      description: "List recent jobs, newest first, optionally for one agent or status.",
      inputSchema: {
        agent: z.string().min(1).max(40).optional().describe("Only this agent's jobs"),
        status: JobStatusSchema.optional().describe("Only jobs in this status"),
        limit: z.number().int().min(1).max(200).default(20).describe("How many jobs (default 20)"),
      },
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
  server.registerTool(
    "corral_wait",
    {
      title: "Wait for jobs",
      annotations: READS,
      description:
        "Wait until all the given jobs have ended, or the timeout passes, instead of polling. Returns one line per job (listo, error: … or pendiente), each followed by the files it created, modified and deleted.",
      inputSchema: {
        job_ids: z.array(JobIdArg).min(1).max(100).describe("Job ids from *_run_async"),
        timeout_s: z.number().int().min(1).max(3600).default(600).describe("Longest wait in seconds (default 600)"),
      },
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
          const result = await waits.waitFor(job_ids, timeout_s * 1000, extra.signal);
          const pending = result.filter((j) => !isFinalStatus(j.status)).length;
          const head = pending ? `${pending} of ${result.length} still running after ${timeout_s} s` : `all ${result.length} ended`;
          const files = await Promise.all(result.map((j) => services.files.listed(j.id)));
          return textResult([head, ...result.flatMap((j, i) => waitLines(j, files[i] ?? { files: [], cutAt: null }))].join("\n"));
        } finally {
          stopReporting();
        }
      }),
  );
}

/** Stops a job and its process group. */
function registerCancelTool(server: McpServer, services: Services): void {
  const { cancels } = services;
  server.registerTool(
    "corral_cancel",
    {
      title: "Cancel a job",
      annotations: CANCELS,
      description: "Cancel a job: its worker and every process it started are stopped.",
      inputSchema: { job_id: JobIdArg.describe("The job to cancel") },
    },
    ({ job_id }) =>
      guarded(async () => {
        const job = await cancels.cancel(job_id, mcpActor(server.server.getClientVersion()));
        return textResult(`${job.id}: ${job.status === "cancelled" ? "cancelled" : `already ended (${statusWord(job)})`}`);
      }),
  );
}

/** A job's output: its last lines, or a page from a cursor. */
function registerLogsTool(server: McpServer, services: Services): void {
  const { jobs, output } = services;
  server.registerTool(
    "corral_logs",
    {
      title: "Read a job's log",
      annotations: READS,
      description:
        "Read a job's output: its last lines (tail, as docker logs --tail), or from a cursor to page through everything. A page ends with the cursor to continue from.",
      inputSchema: {
        job_id: JobIdArg.describe("The job"),
        tail: z.number().int().min(1).max(100_000).optional().describe(`Last lines to show (default ${LOG_TAIL_LINES})`),
        max_chars: z
          .number()
          .int()
          .min(1)
          .max(200_000)
          .optional()
          .describe(`At most this many characters of those lines (default ${LOG_MAX_CHARS}); older lines are left out first`),
        cursor: z.number().int().min(0).optional().describe("Read from this cursor instead (0 = the start)"),
      },
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
