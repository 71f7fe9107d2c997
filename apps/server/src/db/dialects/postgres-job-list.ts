// The jobs list in PostgreSQL: what sqlite-job-list.ts answers in SQLite, the same jobs in
// the same order with the same totals. Without text, a page is read from an index that ends in
// seq (one range per status, merged) and counted exactly. Text is matched case-folded (Unicode
// lower case through ICU, whatever the database's locale: corral_fold) and literally, anywhere in
// the id, prompt or error. drizzle-pg/0001 indexes those folded texts by trigram (pg_trgm) for
// three characters and more, and by their characters and pairs of characters for one or two.
// Which way a search reads is chosen from the newest jobs of the filter: common text is found by
// walking the jobs newest first, rare text through an index.
import { and, eq, inArray, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { JobListQuery, JobStatus } from "@corral/shared";
import type { JobPage } from "../dialect.js";
import type { PgExecutor } from "../pg/client.js";
import { jobs } from "../pg/schema.js";
import { SEARCH_COUNT_CAP } from "../registry.js";

/** The newest jobs of the filter a search looks at first; when the filter holds no more, they are the answer. */
const SAMPLE = 250;

/** As the indexes fold each text (drizzle-pg/0001): the same expression, or they cannot serve it. */
const fold = (text: SQLWrapper) => sql`corral_fold(${text})`;
const foldParam = (text: string) => sql`corral_fold(${text}::text)`;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** One or two characters once folded (JavaScript and ICU lower-case alike): jobs_search_short_idx holds each such piece. */
const isShort = (text: string) => [...text.toLowerCase()].length <= 2;

/** pg_trgm indexes runs of letters and digits; three ASCII ones in a row give a trigram in any locale. */
const hasTrigram = (text: string) => /[a-z0-9]{3}/i.test(text);

const searched = [jobs.id, jobs.prompt, jobs.error] as const;

/** `text` in `column`, as an index answers it: exactly from the pieces for short text, by trigram (LIKE, rechecked) for longer. */
function indexedMatch(column: SQLWrapper, text: string): SQL {
  if (isShort(text)) return sql`corral_short_grams(${fold(column)}) && array[${foldParam(text)}]`;
  return sql`${fold(column)} like ${foldParam(`%${escapeLike(text)}%`)}`;
}

/**
 * `text` in one of the searched columns, checked row by row: no index answers strpos. ICU's
 * folding costs most of a walk, so ASCII text is looked for in each column's ASCII folding
 * first; only a column that holds other characters (whose folding may differ) is folded by ICU.
 */
function scannedMatch(text: string): SQL {
  const folded = foldParam(text);
  const inColumn = /^\p{ASCII}*$/u.test(text)
    ? (column: SQLWrapper) =>
        sql`(strpos(lower(${column} collate "C"), lower(${text}::text collate "C")) > 0 or (octet_length(${column}) <> char_length(${column}) and strpos(${fold(column)}, ${folded}) > 0))`
    : (column: SQLWrapper) => sql`strpos(${fold(column)}, ${folded}) > 0`;
  return sql`(${sql.join(searched.map(inColumn), sql` or `)})`;
}

function filterOf(agent: string | undefined, statuses: readonly JobStatus[]): SQL {
  return and(agent ? eq(jobs.agent, agent) : undefined, statuses.length ? inArray(jobs.status, [...statuses]) : undefined) ?? sql`true`;
}

/**
 * `select seq[, extra]` from the jobs in the filter, one branch per status: ordered by seq, the
 * branches merge from their own index ranges, where an IN over the index's first column would
 * collect and sort them all.
 */
function branches(agent: string | undefined, statuses: readonly JobStatus[], where?: SQL, extra?: SQL): SQL {
  const branch = (only: JobStatus[]) =>
    sql`select ${jobs.seq} as seq${extra ? sql`, ${extra} as hit` : sql``} from ${jobs} where ${filterOf(agent, only)}${where ? sql` and ${where}` : sql``}`;
  return sql.join((statuses.length ? statuses.map((s) => [s]) : [[]]).map(branch), sql` union all `);
}

export function createPgJobPage(db: PgExecutor): (query: JobListQuery) => Promise<JobPage> {
  /** Runs `counted` (a query of `n` and `page`, an int8[]), the page as numbers. */
  async function pageOf(counted: SQL): Promise<{ n: number; page: number[] }> {
    const { rows } = await db.execute<{ n: number; page: string[] }>(counted);
    const row = rows[0];
    return { n: Number(row?.n ?? 0), page: (row?.page ?? []).map(Number) };
  }

  /** The first `cap + 1` seqs of `source` (a query of seqs), counted, and the page of them. */
  async function capped(source: SQL, cap: number, limit: number, offset: number, materialize = false): Promise<JobPage> {
    const matches = materialize ? sql`with m as materialized (${source}), ` : sql`with m as (${source}), `;
    const { n, page } = await pageOf(sql`${matches}s as (select seq from m order by seq desc limit ${cap + 1})
      select (select count(*) from s) as n, array(select seq from s order by seq desc limit ${limit} offset ${offset})::int8[] as page`);
    return { page, total: Math.min(n, cap), totalCapped: n > cap };
  }

  async function search(q: string, agent: string | undefined, statuses: readonly JobStatus[], limit: number, offset: number): Promise<JobPage> {
    const cap = offset + SEARCH_COUNT_CAP;
    const newest = branches(agent, statuses, undefined, scannedMatch(q));
    // The newest jobs of the filter (the answer, when the filter holds no more), and jobs spread
    // evenly over the whole registry: how common the text is, whatever the last jobs were like.
    const { rows } = await db.execute<{ scanned: number; hits: string[]; top: number | null; probed: number; found: number }>(sql`
      with sample as materialized (select seq, hit from (${newest}) f order by seq desc limit ${SAMPLE + 1}),
        top as (select max(${jobs.seq}) as top from ${jobs}),
        spread as (select ${scannedMatch(q)} as hit from ${jobs} where ${jobs.seq} in
          (select distinct (g * top.top / ${SAMPLE})::int8 from top, generate_series(1, ${SAMPLE}) g))
      select (select count(*) from sample) as scanned, array(select seq from sample where hit order by seq desc)::int8[] as hits,
        (select top from top) as top, (select count(*) from spread) as probed, (select count(*) from spread where hit) as found`);
    const sample = rows[0];
    const hits = (sample?.hits ?? []).map(Number);
    const scanned = Number(sample?.scanned ?? 0);
    // The sample holds the whole filter, or more matches than are counted: it is the answer.
    if (scanned <= SAMPLE || hits.length > cap) {
      return { page: hits.slice(offset, offset + limit), total: Math.min(hits.length, cap), totalCapped: hits.length > cap };
    }
    // Walking newest first reads about (cap + 1) / share jobs; an index reads every job holding the
    // text, about share × all jobs. Longer text without a trigram cannot use an index at all.
    const share = Number(sample?.found ?? 0) / Math.max(1, Number(sample?.probed ?? 0));
    const walk = !(isShort(q) || hasTrigram(q)) || share * share * Number(sample?.top ?? 0) >= cap + 1;
    if (walk) return capped(branches(agent, statuses, scannedMatch(q)), cap, limit, offset);
    // One index read per column, so each candidate is rechecked on its own column alone; materialized,
    // so it is planned apart from the page and read from the index whatever the page wants.
    const filter = filterOf(agent, statuses);
    const matches = searched.map((column) => sql`select ${jobs.seq} as seq from ${jobs} where ${filter} and ${indexedMatch(column, q)}`);
    return capped(sql.join(matches, sql` union `), cap, limit, offset, true);
  }

  return async function jobPage(query) {
    const statuses = [...new Set(query.status ?? [])];
    const { limit, offset, q, agent } = query;
    if (q) return search(q, agent, statuses, limit, offset);
    const { n, page } = await pageOf(sql`select (select count(*) from ${jobs} where ${filterOf(agent, statuses)}) as n,
      array(select seq from (${branches(agent, statuses)}) f order by seq desc limit ${limit} offset ${offset})::int8[] as page`);
    return { page, total: n, totalCapped: false };
  };
}
