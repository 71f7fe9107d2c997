import { and, asc, count, desc, eq, gt, inArray, isNotNull, isNull, max, type SQL, sql } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { ConversationsRepo, HubSessionCounts } from "../../repos/conversations.js";
import type { HubMessageRow } from "../../schema.js";
import type { PgExecutor } from "../client.js";
import { hubAgents, hubMessages } from "../schema.js";
import { inOrder, ORDERED } from "./in-order.js";
import { bytewise, stored } from "./sql.js";

/** Conversation sessions in PostgreSQL: ../../repos/conversations.ts, answering the same. */
export function createPgConversationsRepo(db: PgExecutor): Async<ConversationsRepo> {
  const inbox = (session: string, to: string) => and(eq(hubMessages.session, session), eq(hubMessages.to, to), isNull(hubMessages.receivedAt));
  return {
    async register(row) {
      await db
        .insert(hubAgents)
        .values({ ...row, endedAt: null })
        .onConflictDoUpdate({
          target: [hubAgents.session, hubAgents.name],
          set: { label: row.label, registeredAt: row.registeredAt, lastSeenAt: row.lastSeenAt, endedAt: null },
        });
    },
    async end(session, name, at, lastSeenAt) {
      await db
        .update(hubAgents)
        .set({ endedAt: at, lastSeenAt })
        .where(and(eq(hubAgents.session, session), eq(hubAgents.name, name)));
    },
    async endAll(at) {
      const ended = await db.update(hubAgents).set({ endedAt: at }).where(isNull(hubAgents.endedAt)).returning({ name: hubAgents.name });
      return ended.length;
    },
    async agent(session, name) {
      const [row] = await db
        .select()
        .from(hubAgents)
        .where(and(eq(hubAgents.session, session), eq(hubAgents.name, name)))
        .limit(1);
      return row;
    },
    async agents(session) {
      return db
        .select()
        .from(hubAgents)
        .where(eq(hubAgents.session, session))
        .orderBy(asc(hubAgents.registeredAt), asc(bytewise(hubAgents.name)));
    },
    async agentCount(session) {
      const [row] = await db.select({ n: count() }).from(hubAgents).where(eq(hubAgents.session, session));
      return row?.n ?? 0;
    },
    // Ties in endedAt go by name, as SQLite's sort keeps the primary key's order.
    async forgetOldestIdle(session) {
      const waiting = db
        .select({ to: hubMessages.to })
        .from(hubMessages)
        .where(and(eq(hubMessages.session, session), isNull(hubMessages.receivedAt)));
      const [oldest] = await db
        .select({ name: hubAgents.name })
        .from(hubAgents)
        .where(and(eq(hubAgents.session, session), isNotNull(hubAgents.endedAt), sql`${hubAgents.name} not in ${waiting}`))
        .orderBy(asc(hubAgents.endedAt), asc(bytewise(hubAgents.name)))
        .limit(1);
      if (!oldest) return false;
      await db.delete(hubAgents).where(and(eq(hubAgents.session, session), eq(hubAgents.name, oldest.name)));
      return true;
    },
    // The id is a reader's cursor: ids must commit in the order they are drawn (in-order.ts).
    async insertMessage(row) {
      return stored(await inOrder(db, ORDERED.hubMessages, (tx) => tx.insert(hubMessages).values(row).returning()));
    },
    async inbox(session, to, limit) {
      return db.select().from(hubMessages).where(inbox(session, to)).orderBy(asc(hubMessages.id)).limit(limit);
    },
    async inboxCount(session, to) {
      const [row] = await db.select({ n: count() }).from(hubMessages).where(inbox(session, to));
      return row?.n ?? 0;
    },
    async markReceived(ids, at) {
      if (ids.length) await db.update(hubMessages).set({ receivedAt: at }).where(inArray(hubMessages.id, ids));
    },
    /** As SQLite reads it: for an agent, its sent and its received messages each from their own index, merged. */
    async read(session, agent, cursor, limit) {
      const page = (where: SQL | undefined) =>
        db
          .select()
          .from(hubMessages)
          .where(and(eq(hubMessages.session, session), gt(hubMessages.id, cursor), where))
          .orderBy(asc(hubMessages.id))
          .limit(limit);
      if (agent === undefined) return page(undefined);
      const [sent, received] = await Promise.all([page(eq(hubMessages.from, agent)), page(eq(hubMessages.to, agent))]);
      const merged = new Map<number, HubMessageRow>();
      for (const row of [...sent, ...received]) merged.set(row.id, row);
      return [...merged.values()].sort((a, b) => a.id - b.id).slice(0, limit);
    },
    async lastJob(session, from, to) {
      const [row] = await db
        .select({ jobId: hubMessages.jobId })
        .from(hubMessages)
        .where(and(eq(hubMessages.session, session), eq(hubMessages.from, from), eq(hubMessages.to, to), isNotNull(hubMessages.jobId)))
        .orderBy(desc(hubMessages.id))
        .limit(1);
      return row?.jobId ?? null;
    },
    async pendingAnswers() {
      return db.select().from(hubMessages).where(eq(hubMessages.answerPending, true)).orderBy(asc(hubMessages.id));
    },
    async settleAnswer(id) {
      await db.update(hubMessages).set({ answerPending: false }).where(eq(hubMessages.id, id));
    },
    /** Sessions with agents first, then those with only messages, each by name: the order SQLite groups them in. */
    async sessions() {
      const [messages, agents] = await Promise.all([
        db
          .select({ session: hubMessages.session, messages: count(), lastMessageAt: max(hubMessages.at) })
          .from(hubMessages)
          .groupBy(hubMessages.session)
          .orderBy(bytewise(hubMessages.session)),
        db.select({ session: hubAgents.session, agents: count() }).from(hubAgents).groupBy(hubAgents.session).orderBy(bytewise(hubAgents.session)),
      ]);
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
