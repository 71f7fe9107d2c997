import { and, asc, count, desc, eq, gt, inArray, isNotNull, isNull, lte, max, or, type SQL, sql } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { ConversationsRepo, HubSessionCounts } from "../registry.js";
import type { HubMessageRow } from "../schema.js";
import { stored } from "./rows.js";

/** Conversation sessions: who registered under which name, and the messages between them. */
export function createConversationsRepo(d: Dialect): ConversationsRepo {
  const { hubAgents, hubMessages } = d.tables;
  const live = (at: number) => and(isNull(hubAgents.endedAt), gt(hubAgents.leaseUntil, at));
  // A registration that ends takes its live target with it: the password is not kept past its use.
  const ending = (at: number) => ({ endedAt: at, handleHash: null, targetUrl: null, targetSession: null, targetPassword: null });
  /**
   * Presence renewed at `at` by a call with the handle. A registration that had gone offline
   * comes back without its live target: the window that registered the address went away, and
   * whatever listens there now (a process that took the port) must never get its password or a
   * message. It registers again with its server to be live once more. (`renew` keeps the target:
   * only a stream of an MCP session the registration is bound to renews, and that is its client.)
   */
  const present = (at: number, presentUntil: number) => {
    const kept = <T>(column: T) => sql`case when ${hubAgents.leaseUntil} > ${at} then ${column} else null end`;
    return {
      lastSeenAt: at,
      leaseUntil: presentUntil,
      targetUrl: kept(hubAgents.targetUrl),
      targetSession: kept(hubAgents.targetSession),
      targetPassword: kept(hubAgents.targetPassword),
    };
  };
  const inbox = (session: string, to: string) => and(eq(hubMessages.session, session), eq(hubMessages.to, to), isNull(hubMessages.receivedAt));
  return {
    async register(row) {
      await d.db
        .insert(hubAgents)
        .values({ ...row, endedAt: null })
        .onConflictDoUpdate({
          target: [hubAgents.session, hubAgents.name],
          set: {
            label: row.label,
            registeredAt: row.registeredAt,
            lastSeenAt: row.lastSeenAt,
            endedAt: null,
            handleHash: row.handleHash,
            leaseUntil: row.leaseUntil,
            targetUrl: row.targetUrl,
            targetSession: row.targetSession,
            targetPassword: row.targetPassword,
          },
        });
    },
    async end(handleHash, at) {
      const [ended] = await d.db
        .update(hubAgents)
        .set(ending(at))
        .where(and(eq(hubAgents.handleHash, handleHash), isNull(hubAgents.endedAt)))
        .returning({ session: hubAgents.session, name: hubAgents.name });
      return ended;
    },
    async touch(handleHash, at, presentUntil, unusedSince) {
      const [row] = await d.db
        .update(hubAgents)
        .set(present(at, presentUntil))
        .where(and(eq(hubAgents.handleHash, handleHash), isNull(hubAgents.endedAt), gt(hubAgents.lastSeenAt, unusedSince)))
        .returning();
      return row;
    },
    async renew(handleHashes, at, presentUntil) {
      if (!handleHashes.length) return;
      await d.db
        .update(hubAgents)
        .set({ lastSeenAt: at, leaseUntil: presentUntil })
        .where(and(inArray(hubAgents.handleHash, handleHashes), isNull(hubAgents.endedAt)));
    },
    async lapseLive(handleHash, at) {
      const rows = await d.db
        .update(hubAgents)
        .set({ leaseUntil: at })
        .where(and(eq(hubAgents.handleHash, handleHash), isNull(hubAgents.endedAt), isNotNull(hubAgents.targetUrl), gt(hubAgents.leaseUntil, at)))
        .returning({ session: hubAgents.session });
      return rows.length > 0;
    },
    async expire(at, unusedSince) {
      return d.db
        .update(hubAgents)
        .set(ending(at))
        .where(and(isNull(hubAgents.endedAt), or(lte(hubAgents.lastSeenAt, unusedSince), isNull(hubAgents.handleHash), isNull(hubAgents.leaseUntil))))
        .returning({ session: hubAgents.session, name: hubAgents.name });
    },
    async lapsed(since, at) {
      return d.db
        .select({ session: hubAgents.session, name: hubAgents.name })
        .from(hubAgents)
        .where(and(isNull(hubAgents.endedAt), gt(hubAgents.leaseUntil, since), lte(hubAgents.leaseUntil, at)));
    },
    async liveCount() {
      const [row] = await d.db.select({ n: count() }).from(hubAgents).where(isNull(hubAgents.endedAt));
      return row?.n ?? 0;
    },
    async agent(session, name) {
      const [row] = await d.db
        .select()
        .from(hubAgents)
        .where(and(eq(hubAgents.session, session), eq(hubAgents.name, name)))
        .limit(1);
      return row;
    },
    async agents(session) {
      return d.db
        .select()
        .from(hubAgents)
        .where(eq(hubAgents.session, session))
        .orderBy(asc(hubAgents.registeredAt), asc(d.bytewise(hubAgents.name)));
    },
    async agentCount(session) {
      const [row] = await d.db.select({ n: count() }).from(hubAgents).where(eq(hubAgents.session, session));
      return row?.n ?? 0;
    },
    // One statement: no message can arrive for the agent between the check and the delete. Ties in endedAt go by name.
    async forgetOldestIdle(session) {
      const waiting = d.db
        .select({ to: hubMessages.to })
        .from(hubMessages)
        .where(and(eq(hubMessages.session, session), isNull(hubMessages.receivedAt)));
      const oldest = d.db
        .select({ name: hubAgents.name })
        .from(hubAgents)
        .where(and(eq(hubAgents.session, session), isNotNull(hubAgents.endedAt), sql`${hubAgents.name} not in ${waiting}`))
        .orderBy(asc(hubAgents.endedAt), asc(d.bytewise(hubAgents.name)))
        .limit(1);
      const forgotten = await d.db
        .delete(hubAgents)
        .where(and(eq(hubAgents.session, session), inArray(hubAgents.name, oldest)))
        .returning({ name: hubAgents.name });
      return forgotten.length > 0;
    },
    // The id is a reader's cursor: ids must commit in the order they are drawn.
    async insertMessage(row) {
      return stored(await d.inOrder("hubMessages", (inside) => inside.db.insert(hubMessages).values(row).returning()));
    },
    async inbox(session, to, limit) {
      return d.db.select().from(hubMessages).where(inbox(session, to)).orderBy(asc(hubMessages.id)).limit(limit);
    },
    async inboxCount(session, to) {
      const [row] = await d.db.select({ n: count() }).from(hubMessages).where(inbox(session, to));
      return row?.n ?? 0;
    },
    async markReceived(ids, at) {
      if (ids.length) await d.db.update(hubMessages).set({ receivedAt: at }).where(inArray(hubMessages.id, ids));
    },
    /**
     * For an agent, its sent and its received messages are each read in id order from their own
     * index, `limit` of each, and merged: an OR of the two would collect every match past the
     * cursor and sort them, a cost that grows with the history.
     */
    async read(session, agent, cursor, limit) {
      const page = (where: SQL | undefined) =>
        d.db
          .select()
          .from(hubMessages)
          .where(and(eq(hubMessages.session, session), gt(hubMessages.id, cursor), where))
          .orderBy(asc(hubMessages.id))
          .limit(limit);
      if (agent === undefined) return page(undefined);
      const sent = await page(eq(hubMessages.from, agent));
      const received = await page(eq(hubMessages.to, agent));
      const merged = new Map<number, HubMessageRow>();
      for (const row of [...sent, ...received]) merged.set(row.id, row);
      return [...merged.values()].sort((a, b) => a.id - b.id).slice(0, limit);
    },
    async lastJob(session, from, to) {
      const [row] = await d.db
        .select({ jobId: hubMessages.jobId })
        .from(hubMessages)
        .where(and(eq(hubMessages.session, session), eq(hubMessages.from, from), eq(hubMessages.to, to), isNotNull(hubMessages.jobId)))
        .orderBy(desc(hubMessages.id))
        .limit(1);
      return row?.jobId ?? null;
    },
    async pendingAnswers() {
      return d.db.select().from(hubMessages).where(eq(hubMessages.answerPending, true)).orderBy(asc(hubMessages.id));
    },
    async settleAnswer(id) {
      await d.db.update(hubMessages).set({ answerPending: false }).where(eq(hubMessages.id, id));
    },
    async sessions(at) {
      const messages = await d.db
        .select({ session: hubMessages.session, messages: count(), lastMessageAt: max(hubMessages.at) })
        .from(hubMessages)
        .groupBy(hubMessages.session)
        .orderBy(d.bytewise(hubMessages.session));
      const agents = await d.db
        .select({ session: hubAgents.session, agents: count(), online: count(sql`case when ${live(at)} then 1 end`) })
        .from(hubAgents)
        .groupBy(hubAgents.session)
        .orderBy(d.bytewise(hubAgents.session));
      const byName = new Map<string, HubSessionCounts>();
      for (const a of agents) byName.set(a.session, { name: a.session, agents: a.agents, online: a.online, messages: 0, lastMessageAt: null });
      for (const m of messages) {
        const entry = byName.get(m.session) ?? { name: m.session, agents: 0, online: 0, messages: 0, lastMessageAt: null };
        byName.set(m.session, { ...entry, messages: m.messages, lastMessageAt: m.lastMessageAt });
      }
      return [...byName.values()];
    },
  };
}
