import { AgentNameSchema, isFinalStatus, type Job, McpJobInputSchema } from "@corral/shared";
import type { McpServer } from "@modelcontextprotocol/server";
import { defineTool } from "./define.js";
import { z } from "zod";
import { mcpActor } from "../../audit/service.js";
import type { Services } from "../../services.js";
import type { HubLinks } from "../hub-link.js";
import { inMcpNames, launchRequestOf, RARE_LAUNCH_OPTIONS } from "../launch-input.js";
import { type McpMount, shownOptions } from "../toolsets.js";
import { clientOf, runAnswerText } from "./agent-tools.js";
import { guarded, keepReporting, onGivenUp, textResult } from "./results.js";
import { LAUNCHES } from "./annotations.js";

const { session: _, ...jobFields } = McpJobInputSchema.shape;

/**
 * `corral_run_many`'s input: the job fields of `<agent>_run` (no follow-up), the agents, and whether
 * to wait. Strict, as the REST body is: a `session` or `agent` passed by mistake is refused by
 * name rather than dropped (a caller expecting a follow-up would otherwise get fresh runs).
 */
const RunManyInputSchema = z
  .object({
    agents: z.array(AgentNameSchema).min(1, "name at least one agent").max(32),
    ...jobFields,
    workdir: jobFields.workdir.describe("Each agent works in <workdir>/<agent> (default: its own)"),
    shared_workdir: jobFields.shared_workdir.describe("All work in workdir itself"),
    async: z.boolean().optional(),
  })
  .strict();

/**
 * One prompt to several agents (`/mcp` only). It waits for all, as `<agent>_run` does for one, and
 * answers each agent's `_run` text in turn; the caller giving up cancels every job it started.
 */
export function registerRunManyTool(server: McpServer, services: Services, mount: McpMount, hubLinks: HubLinks): void {
  const { jobs, launches, waits, cancels, config } = services;
  defineTool(
    server,
    "corral_run_many",
    {
      title: "Run several jobs",
      annotations: LAUNCHES,
      description: "One prompt to several agents, a job each; waits for all (async: returns the ids). A refusal starts none.",
      input: RunManyInputSchema,
      // shared_workdir chooses between the two ways this tool works: it stays shown.
      rare: RARE_LAUNCH_OPTIONS.filter((option) => option !== "shared_workdir"),
      shown: shownOptions(mount),
    },
    ({ agents, async, ...input }, extra) =>
      guarded(async () => {
        const group = await inMcpNames(() => launches.launchMany(agents, launchRequestOf(input), "mcp", mcpActor(clientOf(server, extra)).client));
        const ids = group.map((j) => j.id);
        // Nobody waits for them: their ends are pushed into a client that takes Claude Code channel events.
        if (async) for (const id of ids) hubLinks.get(extra.sessionId)?.launched(id);
        if (async) return textResult(group.map((j) => `${j.id} ${j.agent} ${j.workdir}`).join("\n"));
        const stopReporting = keepReporting(extra, config.progressIntervalMs, async () => {
          const ended = (await Promise.all(ids.map((id) => jobs.get(id)))).filter((job) => isFinalStatus(job.status)).length;
          return { progress: ended, total: ids.length, message: `${ended}/${ids.length} ended` };
        });
        // The caller gave up: its jobs go too. Nobody awaits these, so a failure is only dropped.
        const stopListening = onGivenUp(extra, () => {
          for (const id of ids) void cancels.cancel(id, mcpActor(clientOf(server, extra))).catch(() => undefined);
        });
        try {
          const ended = await waits.waitFor(ids, Number.MAX_SAFE_INTEGER, extra.mcpReq.signal);
          return textResult(await manyText(services, ended));
        } finally {
          stopReporting();
          stopListening();
        }
      }),
  );
}

/** `ok` or `error: n of m did not succeed`, the Compare link, then each job's `_run` text under its agent's name. */
async function manyText(services: Services, group: Job[]): Promise<string> {
  const failed = group.filter((j) => j.status !== "succeeded").length;
  const head = failed ? `error: ${failed} of ${group.length} did not succeed` : `ok: all ${group.length} succeeded`;
  const compare = `compare in the panel: /compare?jobs=${group.map((j) => j.id).join(",")}`;
  const answers = await Promise.all(group.map((job) => runAnswerText(services, job)));
  return [head, compare, ...group.flatMap((job, i) => ["", `=== ${job.agent} ===`, answers[i] ?? ""])].join("\n");
}
