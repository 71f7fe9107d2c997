import { asc, eq, sql } from "drizzle-orm";
import type { Dialect } from "../dialect.js";
import type { OllamaModelsRepo } from "../registry.js";
import { lastOfEach } from "./rows.js";

export function createOllamaModelsRepo(d: Dialect): OllamaModelsRepo {
  const { ollamaModels } = d.tables;
  const key = [ollamaModels.baseUrl, ollamaModels.model];
  return {
    async forServer(baseUrl) {
      return d.db
        .select()
        .from(ollamaModels)
        .where(eq(ollamaModels.baseUrl, baseUrl))
        .orderBy(asc(d.bytewise(ollamaModels.model)));
    },
    // One statement (all or none); a listing is a server's models, a few dozen rows.
    async saveFacts(baseUrl, listing, checkedAt) {
      const rows = lastOfEach(listing, (m) => m.model).map(({ model, facts }) => ({ baseUrl, model, facts: d.storable(facts), checkedAt }));
      if (!rows.length) return;
      await d.db
        .insert(ollamaModels)
        .values(rows)
        .onConflictDoUpdate({ target: key, set: { facts: sql`excluded.facts`, checkedAt: sql`excluded.checked_at` } });
    },
    async saveProbe(baseUrl, model, probe) {
      const set = { probeOutcome: probe.outcome, probeDetail: d.storable(probe.detail), probedAt: probe.checkedAt };
      await d.db
        .insert(ollamaModels)
        .values({ baseUrl, model, ...set })
        .onConflictDoUpdate({ target: key, set });
    },
  };
}
