import { count, desc, eq, sql } from "drizzle-orm";
import type { AuditListQuery } from "@corral/shared";
import type { Db } from "../client.js";
import { auditLog, type AuditRow } from "../schema.js";

export type NewAuditRow = Omit<typeof auditLog.$inferInsert, "id">;

export function createAuditRepo(db: Db) {
  // Prepared once: every launch stores an entry.
  const inserting = db
    .insert(auditLog)
    .values({
      at: sql.placeholder("at"),
      action: sql.placeholder("action"),
      jobId: sql.placeholder("jobId"),
      agent: sql.placeholder("agent"),
      door: sql.placeholder("door"),
      client: sql.placeholder("client"),
    })
    .returning()
    .prepare();
  return {
    insert(row: NewAuditRow): AuditRow {
      return inserting.get({ ...row, client: row.client ?? null }) as AuditRow;
    },
    list(query: AuditListQuery): { rows: AuditRow[]; total: number } {
      const where = query.jobId ? eq(auditLog.jobId, query.jobId) : undefined;
      const rows = db.select().from(auditLog).where(where).orderBy(desc(auditLog.id)).limit(query.limit).offset(query.offset).all();
      const total = db.select({ n: count() }).from(auditLog).where(where).get()?.n ?? 0;
      return { rows, total };
    },
  };
}

export type AuditRepo = ReturnType<typeof createAuditRepo>;
