// The jobs list in SQLite: newest first (by seq, the order jobs were added), filtered by agent, statuses
// and text, a page at a time. Every filter reads a page from an index that ends in seq, so a page
// costs the same at 10 or 100,000 jobs; rows are read only for the page itself. Text goes
// through jobs_search (drizzle/0008), a trigram index of each job's id, prompt and error.
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { JobListQuery, JobStatus } from "@corral/shared";
import type { Db } from "../client.js";
import type { JobPage } from "../dialect.js";
import { SEARCH_COUNT_CAP } from "../registry.js";
import { jobs } from "../schema.js";

/**
 * Up to this many jobs in the agent and status filter, a text search asks the index about each
 * of them; above, it walks the text's matches and checks the filter on each.
 */
const FEW_FILTERED = 100;

/** Trigrams need three characters; shorter text is looked up in the index's vocabulary. */
const MIN_INDEXED_CHARS = 3;

/** drizzle/0008 appends two of these to each indexed value; text that holds one is matched by LIKE. */
const PAD = "\u0001";

/**
 * One or two characters found in at least this share of the newest jobs start too many trigrams
 * to gather from the vocabulary quickly; LIKE finds them at once in the newest jobs instead.
 */
const COMMON_SHARE = 0.5;
const SAMPLE = 1000;

const searchTable = sql.raw("jobs_search");
const termsTable = sql.raw("jobs_search_terms");

/** Quoted as one FTS5 phrase, so `*`, `-`, `NEAR`, `:` and parentheses are plain characters. */
const phrase = (text: string) => `"${text.replaceAll('"', '""')}"`;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `text` anywhere in the id, prompt or error, ASCII case folded. */
function likeText(text: string): SQL {
  const pattern = `%${escapeLike(text)}%`;
  const like = (column: typeof jobs.prompt | typeof jobs.id | typeof jobs.error) => sql`${column} like ${pattern} escape '\\'`;
  return sql`${like(jobs.prompt)} or ${like(jobs.id)} or ${like(jobs.error)}`;
}

/** The agent and status filter; true when there is none. */
function filterOf(agent: string | undefined, statuses: readonly JobStatus[]): SQL {
  return and(agent ? eq(jobs.agent, agent) : undefined, statuses.length ? inArray(jobs.status, [...statuses]) : undefined) ?? sql`1`;
}

/** A query of the matching jobs' seqs; `few` when it is known to hold at most FEW_FILTERED. */
interface Matches {
  query: SQL;
  few: boolean;
}

export function createSqliteJobPage(db: Db): (query: JobListQuery) => JobPage {
  const seqs = (query: SQL): number[] => db.all<{ seq: number }>(query).map((r) => r.seq);

  /**
   * Seqs of the jobs in the filter, newest first. Several statuses are merged from one index
   * range each, since an IN over the index's first column would sort the whole set.
   */
  function filteredPage(agent: string | undefined, statuses: readonly JobStatus[], limit: number, offset: number): number[] {
    const arm = (only: JobStatus[]) => sql`select ${jobs.seq} as seq from ${jobs} where ${filterOf(agent, only)}`;
    const arms = statuses.length ? statuses.map((s) => arm([s])) : [arm([])];
    return seqs(sql`${sql.join(arms, sql` union all `)} order by seq desc limit ${limit} offset ${offset}`);
  }

  /** The jobs matching `match` (an FTS5 query over jobs_search) and the filter. */
  function indexedMatches(match: string, filter: SQL | null): Matches {
    if (!filter) return { query: sql`select rowid as seq from ${searchTable} where ${searchTable} match ${match}`, few: false };
    if (db.all(sql`select 1 from ${jobs} where ${filter} limit ${FEW_FILTERED + 1}`).length <= FEW_FILTERED) {
      const query = sql`select ${jobs.seq} as seq from ${jobs} where ${filter} and exists (select 1 from ${searchTable} where ${searchTable} match ${match} and rowid = ${jobs.seq})`;
      return { query, few: true };
    }
    // The text index leads (CROSS JOIN keeps it outside): its matches come newest first, and an
    // index ending in seq answers agent and status for each without reading the row.
    const query = sql`select ${searchTable}.rowid as seq from ${searchTable} cross join ${jobs} on ${jobs.seq} = ${searchTable}.rowid where ${searchTable} match ${match} and ${filter}`;
    return { query, few: false };
  }

  /** The trigrams that begin with `text` (one or two characters), as an FTS5 query; null when there are none. */
  function shortMatch(text: string): string | null {
    const folded = text.toLowerCase();
    const terms = db
      .all<{ term: string }>(sql`select term from ${termsTable} where term >= ${folded} and term <= ${`${folded}\u{10FFFF}\u{10FFFF}`}`)
      .map((r) => r.term);
    return terms.length ? terms.map(phrase).join(" OR ") : null;
  }

  /** Whether most of the newest jobs hold `text` somewhere. */
  function common(text: string): boolean {
    const sample = db.get<{ rows: number; hits: number | null }>(
      sql`select count(*) as rows, sum(${likeText(text)}) as hits from ${jobs} where ${jobs.seq} > (select max(${jobs.seq}) from ${jobs}) - ${SAMPLE}`,
    );
    return Boolean(sample && (sample.hits ?? 0) >= COMMON_SHARE * sample.rows);
  }

  /** The jobs holding `text` (and in the filter); null when none can. */
  function matchesOf(text: string, filter: SQL | null): Matches | null {
    const chars = [...text].length;
    if (text.includes(PAD) || (chars < MIN_INDEXED_CHARS && common(text))) {
      return { query: sql`select ${jobs.seq} as seq from ${jobs} where ${filter ?? sql`1`} and (${likeText(text)})`, few: false };
    }
    const match = chars >= MIN_INDEXED_CHARS ? phrase(text) : shortMatch(text);
    return match ? indexedMatches(match, filter) : null;
  }

  function search(text: string, filter: SQL | null, limit: number, offset: number): JobPage {
    const matches = matchesOf(text, filter);
    if (!matches) return { page: [], total: 0, totalCapped: false };
    const newestFirst = sql`${matches.query} order by seq desc`;
    if (matches.few) {
      const all = seqs(newestFirst);
      return { page: all.slice(offset, offset + limit), total: all.length, totalCapped: false };
    }
    const cap = offset + SEARCH_COUNT_CAP;
    const n = db.get<{ n: number }>(sql`select count(*) as n from (${matches.query} limit ${cap + 1})`)?.n ?? 0;
    return { page: seqs(sql`${newestFirst} limit ${limit} offset ${offset}`), total: Math.min(n, cap), totalCapped: n > cap };
  }

  return function jobPage(query) {
    const statuses = [...new Set(query.status ?? [])];
    const filter = query.agent || statuses.length ? filterOf(query.agent, statuses) : null;
    const { limit, offset, q } = query;
    if (q) return search(q, filter, limit, offset);
    return {
      page: filteredPage(query.agent, statuses, limit, offset),
      // Without a where clause SQLite counts from the page headers of the smallest index.
      total: db.get<{ n: number }>(sql`select count(*) as n from ${jobs}${filter ? sql` where ${filter}` : sql``}`)?.n ?? 0,
      totalCapped: false,
    };
  };
}
