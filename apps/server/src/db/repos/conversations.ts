import { and, asc, count, desc, eq, gt, inArray, isNotNull, isNull, max, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client.js";
import { hubAgents, hubMessages, type HubAgentRow, type HubMessageRow } from "../schema.js";

export type NewHubMessage = Omit<typeof hubMessages.$inferInsert, "id">;

export interface HubSessionCounts {
  name: string;
  agents: number;
  messages: number;
  lastMessageAt: number | null;
}

/** Conversation sessions: who registered under which name, and the messages between them. */
export function createConversationsRepo(db: Db) {
  const inbox = (session: string, to: string) => and(eq(hubMessages.session, session), eq(hubMessages.to, to), isNull(hubMessages.receivedAt));
  return {
    /** A name (re)joins its session: the row takes the new registration's label and times. */
    register(row: Omit<HubAgentRow, "endedAt">): void {
      db.insert(hubAgents)
        .values({ ...row, endedAt: null })
        .onConflictDoUpdate({
          target: [hubAgents.session, hubAgents.name],
          set: { label: row.label, registeredAt: row.registeredAt, lastSeenAt: row.lastSeenAt, endedAt: null },
        })
        .run();
    },
    end(session: string, name: string, at: number, lastSeenAt: number): void {
      db.update(hubAgents)
        .set({ endedAt: at, lastSeenAt })
        .where(and(eq(hubAgents.session, session), eq(hubAgents.name, name)))
        .run();
    },
    /** At start: no registration outlives the server (they live with MCP sessions, which are in memory). */
    endAll(at: number): number {
      return db.update(hubAgents).set({ endedAt: at }).where(isNull(hubAgents.endedAt)).run().changes;
    },
    agent(session: string, name: string): HubAgentRow | undefined {
      return db
        .select()
        .from(hubAgents)
        .where(and(eq(hubAgents.session, session), eq(hubAgents.name, name)))
        .get();
    },
    agents(session: string): HubAgentRow[] {
      return db.select().from(hubAgents).where(eq(hubAgents.session, session)).orderBy(asc(hubAgents.registeredAt), asc(hubAgents.name)).all();
    },
    agentCount(session: string): number {
      return db.select({ n: count() }).from(hubAgents).where(eq(hubAgents.session, session)).get()?.n ?? 0;
    },
    /** Forgets the session's longest-gone agent that has nothing waiting for it; false when there is none. */
    forgetOldestIdle(session: string): boolean {
      const waiting = db
        .select({ to: hubMessages.to })
        .from(hubMessages)
        .where(and(eq(hubMessages.session, session), isNull(hubMessages.receivedAt)));
      const oldest = db
        .select({ name: hubAgents.name })
        .from(hubAgents)
        .where(and(eq(hubAgents.session, session), isNotNull(hubAgents.endedAt), sql`${hubAgents.name} not in ${waiting}`))
        .orderBy(asc(hubAgents.endedAt))
        .limit(1)
        .get();
      if (!oldest) return false;
      db.delete(hubAgents)
        .where(and(eq(hubAgents.session, session), eq(hubAgents.name, oldest.name)))
        .run();
      return true;
    },
    insertMessage(row: NewHubMessage): HubMessageRow {
      return db.insert(hubMessages).values(row).returning().get();
    },
    /** Messages waiting for `to`, oldest first. */
    inbox(session: string, to: string, limit: number): HubMessageRow[] {
      return db.select().from(hubMessages).where(inbox(session, to)).orderBy(asc(hubMessages.id)).limit(limit).all();
    },
    inboxCount(session: string, to: string): number {
      return db.select({ n: count() }).from(hubMessages).where(inbox(session, to)).get()?.n ?? 0;
    },
    markReceived(ids: number[], at: number): void {
      if (ids.length) db.update(hubMessages).set({ receivedAt: at }).where(inArray(hubMessages.id, ids)).run();
    },
    /**
     * The session's messages after `cursor`, oldest first; with `agent`, those from or to it.
     * For an agent, its sent and its received messages are each read in id order from their own
     * index, `limit` of each, and merged: an OR of the two would collect every match past the
     * cursor and sort them, a cost that grows with the history.
     */
    read(session: string, agent: string | undefined, cursor: number, limit: number): HubMessageRow[] {
      const page = (where: SQL | undefined) =>
        db
          .select()
          .from(hubMessages)
          .where(and(eq(hubMessages.session, session), gt(hubMessages.id, cursor), where))
          .orderBy(asc(hubMessages.id))
          .limit(limit)
          .all();
      if (agent === undefined) return page(undefined);
      const merged = new Map<number, HubMessageRow>();
      for (const row of [...page(eq(hubMessages.from, agent)), ...page(eq(hubMessages.to, agent))]) merged.set(row.id, row);
      return [...merged.values()].sort((a, b) => a.id - b.id).slice(0, limit);
    },
    /** The last job `from` started with `to` in the session (what the next message continues). */
    lastJob(session: string, from: string, to: string): string | null {
      const row = db
        .select({ jobId: hubMessages.jobId })
        .from(hubMessages)
        .where(and(eq(hubMessages.session, session), eq(hubMessages.from, from), eq(hubMessages.to, to), isNotNull(hubMessages.jobId)))
        .orderBy(desc(hubMessages.id))
        .limit(1)
        .get();
      return row?.jobId ?? null;
    },
    /** Messages to workers whose answers are not stored yet. */
    pendingAnswers(): HubMessageRow[] {
      return db.select().from(hubMessages).where(eq(hubMessages.answerPending, true)).orderBy(asc(hubMessages.id)).all();
    },
    settleAnswer(id: number): void {
      db.update(hubMessages).set({ answerPending: false }).where(eq(hubMessages.id, id)).run();
    },
    /** Every session with its registered names and message counts, the latest active first. */
    sessions(): HubSessionCounts[] {
      const messages = db
        .select({ session: hubMessages.session, messages: count(), lastMessageAt: max(hubMessages.at) })
        .from(hubMessages)
        .groupBy(hubMessages.session)
        .all();
      const agents = db.select({ session: hubAgents.session, agents: count() }).from(hubAgents).groupBy(hubAgents.session).all();
      const byName = new Map<string, HubSessionCounts>();
      for (const a of agents) byName.set(a.session, { name: a.session, agents: a.agents, messages: 0, lastMessageAt: null });
      for (const m of messages) {
        const entry = byName.get(m.session) ?? { name: m.session, agents: 0, messages: 0, lastMessageAt: null };
        byName.set(m.session, { ...entry, messages: m.messages, lastMessageAt: m.lastMessageAt });
      }
      return [...byName.values()];
    },
  };
}

export type ConversationsRepo = ReturnType<typeof createConversationsRepo>;
