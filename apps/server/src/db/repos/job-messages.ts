import { eq, sql } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { JobMessagesRepo, StoredMessage } from "../registry.js";

interface ChainRow {
  depth: number;
  role: StoredMessage["role"];
  content: string;
  /** JSON: text in SQLite, jsonb in PostgreSQL; the column decodes either. */
  tool_calls: unknown;
  tool_name: string | null;
}

/** In-process workers' conversations, message by message (the ConversationStore of agents/types.ts). */
export function createJobMessagesRepo(d: Dialect): JobMessagesRepo {
  const { jobMessages } = d.tables;
  // Prepared once each, with tool calls and without: a JSON column would encode a null placeholder as the JSON `null`.
  const appendingAs = (withCalls: boolean) =>
    d.prepare((db) =>
      db.insert(jobMessages).values({
        jobId: sql.placeholder("jobId"),
        seq: sql.placeholder("seq"),
        role: sql.placeholder("role"),
        content: sql.placeholder("content"),
        toolCalls: withCalls ? sql.placeholder("toolCalls") : sql`null`,
        toolName: sql.placeholder("toolName"),
      }),
    );
  const appending = { withCalls: appendingAs(true), withoutCalls: appendingAs(false) };
  return {
    async turns(jobId, maxTurns) {
      // The chain of turns walks follow_up_of back from the job, at most `maxTurns` jobs deep: a turn's
      // messages come with how far back it is, so the newest turns can be kept when not all fit.
      const rows = await d.rows<ChainRow>(sql`
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
        const toolCalls =
          row.tool_calls === null ? null : (jobMessages.toolCalls.mapFromDriverValue(row.tool_calls as string) as StoredMessage["toolCalls"]);
        turns.at(-1)?.push({ role: row.role, content: row.content, toolCalls, toolName: row.tool_name });
      }
      return turns;
    },
    async append(jobId, seq, { role, content, toolCalls, toolName }) {
      const values = { jobId, seq, role, content: d.storable(content), toolName: d.storable(toolName) };
      if (toolCalls === null) await appending.withoutCalls(values);
      else await appending.withCalls({ ...values, toolCalls: d.storable(toolCalls) });
    },
    async restart(jobId) {
      await d.db.delete(jobMessages).where(eq(jobMessages.jobId, jobId));
    },
    async began(jobId) {
      const [row] = await d.db.select({ seq: jobMessages.seq }).from(jobMessages).where(eq(jobMessages.jobId, jobId)).limit(1);
      return row !== undefined;
    },
  };
}
