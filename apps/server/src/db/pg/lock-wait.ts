// Every login that reaches the registry can take any advisory lock (PostgreSQL checks no privilege
// for them) and lock the rows and tables it may write, and hold them in a session or transaction it
// never ends: a hostile runner's login can hold the lock every registry transaction takes. Corral's
// connections therefore wait at most lock_timeout for a lock, and what failed says who holds it.
import type pg from "pg";

/** PostgreSQL's lock_not_available: a statement gave up waiting after lock_timeout. Drizzle wraps it as the cause. */
export function lockTimedOut(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === "55P03") return true;
  }
  return false;
}

interface Holder {
  usename: string | null;
  pid: number;
  held_s: number;
}

/**
 * The other logins' sessions that may hold what a statement waited for: those holding an advisory
 * lock, or with a transaction open longer than lock_timeout. Corral's own login (its server
 * processes) is left out: a session of another login is a runner's, or someone's psql.
 */
export async function lockHolders(pool: pg.Pool): Promise<Holder[]> {
  const result = await pool.query<Holder>(`
    select a.usename, a.pid, floor(extract(epoch from now() - coalesce(a.xact_start, a.backend_start)))::int as held_s
    from pg_stat_activity a
    where a.datname = current_database() and a.pid <> pg_backend_pid() and a.usename is distinct from current_user
      and (a.xact_start < now() - current_setting('lock_timeout')::interval
        or exists (select 1 from pg_locks l where l.pid = a.pid and l.granted and l.locktype = 'advisory'))
    order by held_s desc limit 5`);
  return result.rows;
}

/** What a REST call or tool says when the registry gave up waiting for a lock: who holds it and how to end it. */
export function lockWaitMessage(timeoutMs: number, holders: Holder[]): string {
  const waited = `the registry waited more than ${timeoutMs} ms (CORRAL_REGISTRY_LOCK_TIMEOUT_MS) for a lock another session holds`;
  if (!holders.length) return `${waited}; try again`;
  const who = holders.map((h) => `login ${h.usename ?? "?"} (pid ${h.pid}, for ${h.held_s} s)`).join(", ");
  const pid = holders[0]?.pid;
  return `${waited}: ${who}. A runner under that login keeps a transaction or lock open: stop it, or end its session as PostgreSQL's superuser (SELECT pg_terminate_backend(${pid}))`;
}
