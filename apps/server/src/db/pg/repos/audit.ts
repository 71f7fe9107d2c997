import { count, desc, eq } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createAuditRepo } from "../../repos/audit.js";
import type { PgExecutor } from "../client.js";
import { auditLog } from "../schema.js";
import { stored } from "./sql.js";

export function createPgAuditRepo(db: PgExecutor): Async<ReturnType<typeof createAuditRepo>> {
  return {
    async insert(row) {
      return stored(
        await db
          .insert(auditLog)
          .values({ ...row, client: row.client ?? null })
          .returning(),
      );
    },
    async list(query) {
      const where = query.jobId ? eq(auditLog.jobId, query.jobId) : undefined;
      const rows = await db.select().from(auditLog).where(where).orderBy(desc(auditLog.id)).limit(query.limit).offset(query.offset);
      const [total] = await db.select({ n: count() }).from(auditLog).where(where);
      return { rows, total: total?.n ?? 0 };
    },
  };
}
