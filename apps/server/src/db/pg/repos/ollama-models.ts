import { asc, eq, sql } from "drizzle-orm";
import type { Async } from "../../async.js";
import type { createOllamaModelsRepo } from "../../repos/ollama-models.js";
import type { PgExecutor } from "../client.js";
import { ollamaModels } from "../schema.js";
import { withoutNul } from "./nul.js";
import { bytewise, lastOfEach } from "./sql.js";

export function createPgOllamaModelsRepo(db: PgExecutor): Async<ReturnType<typeof createOllamaModelsRepo>> {
  const key = [ollamaModels.baseUrl, ollamaModels.model];
  return {
    async forServer(baseUrl) {
      // In SQLite's order: it reads them through the primary key's index.
      return db
        .select()
        .from(ollamaModels)
        .where(eq(ollamaModels.baseUrl, baseUrl))
        .orderBy(asc(bytewise(ollamaModels.model)));
    },
    /** One listing's facts, in one statement (all or none); a model listed twice keeps its last facts. */
    async saveFacts(baseUrl, listing, checkedAt) {
      const rows = lastOfEach(listing, (m) => m.model).map(({ model, facts }) => ({ baseUrl, model, facts: withoutNul(facts), checkedAt }));
      if (!rows.length) return;
      await db
        .insert(ollamaModels)
        .values(rows)
        .onConflictDoUpdate({ target: key, set: { facts: sql`excluded.facts`, checkedAt: sql`excluded.checked_at` } });
    },
    async saveProbe(baseUrl, model, probe) {
      const set = { probeOutcome: probe.outcome, probeDetail: withoutNul(probe.detail), probedAt: probe.checkedAt };
      await db
        .insert(ollamaModels)
        .values({ baseUrl, model, ...set })
        .onConflictDoUpdate({ target: key, set });
    },
  };
}
