import { and, asc, eq, isNull } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createRunnersRepo } from "../../repos/runners.js";
import type { PgExecutor } from "../client.js";
import { runners } from "../schema.js";

export function createPgRunnersRepo(db: PgExecutor): Async<ReturnType<typeof createRunnersRepo>> {
  return {
    async register(row) {
      await db.insert(runners).values(row);
    },
    async heartbeat(id, at) {
      return ((await db.update(runners).set({ heartbeatAt: at }).where(eq(runners.id, id))).rowCount ?? 0) > 0;
    },
    async list() {
      return db.select().from(runners).orderBy(asc(runners.startedAt), asc(runners.id));
    },
    async get(id) {
      const [row] = await db.select().from(runners).where(eq(runners.id, id));
      return row;
    },
    async markStopped(id, at) {
      return (
        ((
          await db
            .update(runners)
            .set({ stoppedAt: at })
            .where(and(eq(runners.id, id), isNull(runners.stoppedAt)))
        ).rowCount ?? 0) > 0
      );
    },
  };
}
