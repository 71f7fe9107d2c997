import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { mcpActor } from "../../audit/service.js";
import type { Services } from "../../services.js";
import { clientOf } from "./agent-tools.js";
import { defineTool } from "./define.js";
import { guarded, textResult } from "./results.js";
import { CANCELS, READS } from "./annotations.js";

const JobIdArg = z.string().min(1).max(200);

/** A worktree job's diff, and merging or discarding its branch: the review of `worktree: true` jobs. */
export function registerWorktreeTools(server: McpServer, services: Services): void {
  const { worktrees } = services;
  defineTool(
    server,
    "corral_diff",
    {
      title: "Diff a worktree job",
      annotations: READS,
      description: "A worktree job's diff against its base, uncommitted work included.",
      input: z.object({ job_id: JobIdArg, path: z.string().min(1).max(4096).optional().describe("One file only") }),
    },
    ({ job_id, path }) =>
      guarded(async () => {
        const { diff, truncated } = await worktrees.diff(job_id, path);
        return textResult(diff.trim() ? diff : `no changes${truncated ? "" : " against the base"}`);
      }),
  );
  defineTool(
    server,
    "corral_merge",
    {
      title: "Merge a worktree job",
      annotations: { destructiveHint: false, openWorldHint: false },
      description: "Merge an ended worktree job's branch into its base; a conflict merges nothing.",
      input: z.object({ job_id: JobIdArg }),
    },
    ({ job_id }, extra) =>
      guarded(async () => {
        const merged = await worktrees.merge(job_id, mcpActor(clientOf(server, extra)));
        const how = merged.fastForward ? "fast-forward" : "merge commit";
        return textResult(
          `merged ${merged.job.worktree?.branch} into ${merged.into} (${how}, ${merged.commit.slice(0, 12)}); its worktree is removed`,
        );
      }),
  );
  defineTool(
    server,
    "corral_discard",
    {
      title: "Discard a worktree job",
      annotations: CANCELS,
      description: "Remove an ended worktree job's worktree and branch, unmerged commits too.",
      input: z.object({ job_id: JobIdArg }),
    },
    ({ job_id }, extra) =>
      guarded(async () => {
        const { branch, commits, head } = await worktrees.discard(job_id, mcpActor(clientOf(server, extra)));
        if (commits.length === 0 || !head) return textResult(`discarded ${branch} and its worktree; it had no commits its base lacks`);
        const listed = commits
          .slice(0, 10)
          .map((c) => `\n  ${c}`)
          .join("");
        return textResult(
          `discarded ${branch} and its worktree, with ${commits.length} commit${commits.length === 1 ? "" : "s"} its base lacks:${listed}${
            commits.length > 10 ? "\n  …" : ""
          }\nto bring them back while git keeps them: git branch ${branch} ${head}`,
        );
      }),
  );
}
