import { count, desc, eq } from "drizzle-orm";
import type { AuditListQuery } from "@corral/shared";
import type { Db } from "../client.js";
import { auditLog, type AuditRow } from "../schema.js";

export type NewAuditRow = Omit<typeof auditLog.$inferInsert, "id">;

export function createAuditRepo(db: Db) {
  return {
    insert(row: NewAuditRow): AuditRow {
      return db.insert(auditLog).values(row).returning().get();
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
