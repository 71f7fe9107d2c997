import { eq, sql } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createJobMessagesRepo, StoredMessage } from "../../repos/job-messages.js";
import type { PgExecutor } from "../client.js";
import { jobMessages } from "../schema.js";
import { withoutNul } from "./nul.js";

interface ChainRow extends Record<string, unknown> {
  depth: number;
  role: StoredMessage["role"];
  content: string;
  tool_calls: StoredMessage["toolCalls"];
  tool_name: string | null;
}

/** In-process workers' conversations, message by message (the ConversationStore of agents/types.ts). */
export function createPgJobMessagesRepo(db: PgExecutor): Async<ReturnType<typeof createJobMessagesRepo>> {
  return {
    /** The messages of the job and of those it followed up, one array per job, oldest first, at most `maxTurns` jobs back. */
    async turns(jobId, maxTurns) {
      // The chain of turns walks follow_up_of back from the job, at most `maxTurns` jobs deep.
      const { rows } = await db.execute<ChainRow>(sql`
        with recursive chain(id, depth) as (
          select id, 0 from jobs where id = ${jobId}
          union all
          select jobs.follow_up_of, chain.depth + 1 from jobs join chain on jobs.id = chain.id
          where jobs.follow_up_of is not null and chain.depth + 1 < ${maxTurns}
        )
        select chain.depth, m.role, m.content, m.tool_calls, m.tool_name
        from chain join job_messages m on m.job_id = chain.id
        order by chain.depth desc, m.seq`);
      const turns: StoredMessage[][] = [];
      let depth = -1;
      for (const row of rows) {
        if (row.depth !== depth) {
          turns.push([]);
          depth = row.depth;
        }
        turns.at(-1)?.push({ role: row.role, content: row.content, toolCalls: row.tool_calls, toolName: row.tool_name });
      }
      return turns;
    },
    async append(jobId, seq, message) {
      const { role, content, toolCalls, toolName } = message;
      await db
        .insert(jobMessages)
        .values({ jobId, seq, role, content: withoutNul(content), toolCalls: withoutNul(toolCalls), toolName: withoutNul(toolName) });
    },
    async restart(jobId) {
      await db.delete(jobMessages).where(eq(jobMessages.jobId, jobId));
    },
    async began(jobId) {
      const [row] = await db.select({ seq: jobMessages.seq }).from(jobMessages).where(eq(jobMessages.jobId, jobId)).limit(1);
      return row !== undefined;
    },
  };
}
