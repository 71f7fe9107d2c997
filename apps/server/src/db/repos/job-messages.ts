import { eq } from "drizzle-orm";
import type { Db } from "../client.js";
import { jobMessages, type JobMessageRow } from "../schema.js";

/** A stored message, as in-process workers keep it (agents/types.ts ConversationStore). */
export type StoredMessage = Omit<JobMessageRow, "jobId" | "seq">;

interface ChainRow {
  depth: number;
  role: StoredMessage["role"];
  content: string;
  tool_calls: string | null;
  tool_name: string | null;
}

/** In-process workers' conversations, message by message (the ConversationStore of agents/types.ts). */
export function createJobMessagesRepo(db: Db) {
  const inserting = db.$client.prepare<[string, number, string, string, string | null, string | null]>(
    "insert into job_messages (job_id, seq, role, content, tool_calls, tool_name) values (?, ?, ?, ?, ?, ?)",
  );
  // The chain of turns walks follow_up_of back from the job, at most `max` jobs deep: a turn's
  // messages come with how far back it is, so the newest turns can be kept when not all fit.
  const chain = db.$client.prepare<[string, number], ChainRow>(`
    with recursive chain(id, depth) as (
      select id, 0 from jobs where id = ?
      union all
      select jobs.follow_up_of, chain.depth + 1 from jobs join chain on jobs.id = chain.id
      where jobs.follow_up_of is not null and chain.depth + 1 < ?
    )
    select chain.depth, m.role, m.content, m.tool_calls, m.tool_name
    from chain join job_messages m on m.job_id = chain.id
    order by chain.depth desc, m.seq`);
  return {
    /** The messages of the job and of those it followed up, one array per job, oldest first, at most `maxTurns` jobs back. */
    turns(jobId: string, maxTurns: number): StoredMessage[][] {
      const turns: StoredMessage[][] = [];
      let depth = -1;
      for (const row of chain.all(jobId, maxTurns)) {
        if (row.depth !== depth) {
          turns.push([]);
          depth = row.depth;
        }
        turns.at(-1)?.push({
          role: row.role,
          content: row.content,
          toolCalls: row.tool_calls === null ? null : (JSON.parse(row.tool_calls) as StoredMessage["toolCalls"]),
          toolName: row.tool_name,
        });
      }
      return turns;
    },
    append(jobId: string, seq: number, message: StoredMessage): void {
      const calls = message.toolCalls === null ? null : JSON.stringify(message.toolCalls);
      inserting.run(jobId, seq, message.role, message.content, calls, message.toolName);
    },
    restart(jobId: string): void {
      db.delete(jobMessages).where(eq(jobMessages.jobId, jobId)).run();
    },
    began(jobId: string): boolean {
      return db.select({ seq: jobMessages.seq }).from(jobMessages).where(eq(jobMessages.jobId, jobId)).limit(1).get() !== undefined;
    },
  };
}
