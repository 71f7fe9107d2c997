import { eq } from "drizzle-orm";
import type { Db } from "../client.js";
import { ollamaModels, type OllamaModelRow } from "../schema.js";

export function createOllamaModelsRepo(db: Db) {
  return {
    forServer(baseUrl: string): OllamaModelRow[] {
      return db.select().from(ollamaModels).where(eq(ollamaModels.baseUrl, baseUrl)).all();
    },
    /** One listing's facts, in one transaction. */
    saveFacts(baseUrl: string, listing: Array<{ model: string; facts: Record<string, unknown> }>, checkedAt: number): void {
      db.transaction((tx) => {
        for (const { model, facts } of listing) {
          tx.insert(ollamaModels)
            .values({ baseUrl, model, facts, checkedAt })
            .onConflictDoUpdate({ target: [ollamaModels.baseUrl, ollamaModels.model], set: { facts, checkedAt } })
            .run();
        }
      });
    },
    saveProbe(baseUrl: string, model: string, probe: { outcome: string; detail: string; checkedAt: number }): void {
      const set = { probeOutcome: probe.outcome, probeDetail: probe.detail, probedAt: probe.checkedAt };
      db.insert(ollamaModels)
        .values({ baseUrl, model, ...set })
        .onConflictDoUpdate({ target: [ollamaModels.baseUrl, ollamaModels.model], set })
        .run();
    },
  };
}

export type OllamaModelsRepo = ReturnType<typeof createOllamaModelsRepo>;
