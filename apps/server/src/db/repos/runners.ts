import { asc, eq } from "drizzle-orm";
import type { Db } from "../client.js";
import { runners, type RunnerRow } from "../schema.js";

/** The `corral runner` processes that announced themselves (they need PostgreSQL; SQLite keeps the table empty). */
export function createRunnersRepo(db: Db) {
  return {
    /** A runner announcing itself as it starts; its id is new to every start. */
    register(row: RunnerRow): void {
      db.insert(runners).values(row).run();
    },
    /** Its sign of life; false when no such runner is registered. */
    heartbeat(id: string, at: number): boolean {
      return db.update(runners).set({ heartbeatAt: at }).where(eq(runners.id, id)).run().changes > 0;
    },
    /** Every runner, the first started first. */
    list(): RunnerRow[] {
      return db.select().from(runners).orderBy(asc(runners.startedAt), asc(runners.id)).all();
    },
    get(id: string): RunnerRow | undefined {
      return db.select().from(runners).where(eq(runners.id, id)).get();
    },
    /** It said it was stopping; the first time it said so is kept. */
    markStopped(id: string, at: number): boolean {
      const row = db.select({ stoppedAt: runners.stoppedAt }).from(runners).where(eq(runners.id, id)).get();
      if (!row || row.stoppedAt !== null) return false;
      return db.update(runners).set({ stoppedAt: at }).where(eq(runners.id, id)).run().changes > 0;
    },
  };
}
