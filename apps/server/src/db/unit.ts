import type { Registry, Repos } from "./registry.js";

/**
 * A transaction in progress and what waits for its end: what it stores is announced only once
 * it has committed, and what it set aside in memory is given back if it rolls back.
 */
export interface Unit {
  readonly tx: Repos;
  /** Runs `fn` once the transaction has committed; never if it rolled back. */
  afterCommit(fn: () => void): void;
  /** Runs `fn` if the transaction rolled back. */
  afterRollback(fn: () => void): void;
}

/** Runs `fn` as one transaction of `registry`, then what it left for the commit or the rollback. */
export async function inUnit<T>(registry: Registry, fn: (unit: Unit) => Promise<T>): Promise<T> {
  const committed: (() => void)[] = [];
  const rolledBack: (() => void)[] = [];
  let result: T;
  try {
    result = await registry.transaction((tx) => fn({ tx, afterCommit: (f) => committed.push(f), afterRollback: (f) => rolledBack.push(f) }));
  } catch (err) {
    for (const f of rolledBack) f();
    throw err;
  }
  for (const f of committed) f();
  return result;
}
