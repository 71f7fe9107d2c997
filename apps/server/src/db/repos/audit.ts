import { count, desc, eq, sql } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { AuditRepo } from "../registry.js";
import { stored } from "./rows.js";

export function createAuditRepo(d: Dialect): AuditRepo {
  const { auditLog } = d.tables;
  // Prepared once: every launch stores an entry.
  const inserting = d.prepare((db) =>
    db
      .insert(auditLog)
      .values({
        at: sql.placeholder("at"),
        action: sql.placeholder("action"),
        jobId: sql.placeholder("jobId"),
        agent: sql.placeholder("agent"),
        door: sql.placeholder("door"),
        client: sql.placeholder("client"),
      })
      .returning(),
  );
  return {
    async insert(row) {
      return stored(await inserting({ ...row, client: row.client ?? null }));
    },
    async list(query) {
      const where = query.jobId ? eq(auditLog.jobId, query.jobId) : undefined;
      const rows = await d.db.select().from(auditLog).where(where).orderBy(desc(auditLog.id)).limit(query.limit).offset(query.offset);
      const [total] = await d.db.select({ n: count() }).from(auditLog).where(where);
      return { rows, total: total?.n ?? 0 };
    },
  };
}
