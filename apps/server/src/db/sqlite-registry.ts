import type { DbHandle } from "./client.js";
import { sqliteDialect } from "./dialects/sqlite.js";
import type { Registry, Repos } from "./registry.js";
import { AgentRowCache } from "./repos/agents.js";
import { createRepos } from "./repos/create-repos.js";

/**
 * Whose turn it is on the one connection: one registry call, or one transaction, at a time, the
 * others waiting in the order they came. A repository method awaits between its statements, and
 * every statement on the connection belongs to whatever transaction is open on it: a call from
 * outside that ran a statement while a transaction was open would be committed or rolled back
 * with it, and two calls interleaved would each see the other half done (a claim counting jobs
 * while another takes one). With a turn each, a call's statements run together, as they did when
 * SQLite's repositories were synchronous. A free turn is taken at once: no await is added.
 */
class Turns {
  private busy = false;
  private readonly waiting: (() => void)[] = [];

  async take<T>(fn: () => Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy = true;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.busy = false;
    }
  }
}

type Call = (call: () => Promise<unknown>) => Promise<unknown>;

/** Every method of one repository, called through `through`. */
function repoThrough(repo: object, through: Call): Record<string, unknown> {
  const wrapped: Record<string, unknown> = {};
  for (const [method, value] of Object.entries(repo)) {
    wrapped[method] = typeof value === "function" ? (...args: unknown[]) => through(() => value(...args)) : value;
  }
  return wrapped;
}

/** Every method of every repository, called through `through`. */
function reposThrough(repos: Repos, through: Call): Repos {
  return Object.fromEntries(Object.entries(repos).map(([name, repo]) => [name, repoThrough(repo, through)])) as unknown as Repos;
}

/**
 * The repositories as one transaction sees them. A transaction uses a few of them, so each is
 * wrapped when it is first used rather than all of them for every transaction.
 */
function transactionView(repos: Repos): new (through: Call) => Repos {
  class Inside {
    readonly wrapped = new Map<string, Record<string, unknown>>();
    constructor(readonly through: Call) {}
  }
  for (const [name, repo] of Object.entries(repos)) {
    Object.defineProperty(Inside.prototype, name, {
      get(this: Inside) {
        let wrapped = this.wrapped.get(name);
        if (!wrapped) {
          wrapped = repoThrough(repo, this.through);
          this.wrapped.set(name, wrapped);
        }
        return wrapped;
      },
    });
  }
  return Inside as unknown as new (
    through: Call,
  ) => Repos;
}

/**
 * The SQLite registry. One connection serves everything, so registry calls and transactions take
 * turns on it (Turns); calls through a transaction run in its turn. With no one waiting a call
 * costs only its own awaits.
 */
export function createSqliteRegistry(handle: DbHandle): Registry {
  const { db } = handle;
  const agentRows = new AgentRowCache();
  const turns = new Turns();
  const outside = reposThrough(createRepos(sqliteDialect(db), agentRows), (call) => turns.take(call));
  // One set of repositories for every transaction: the statements they prepare stay prepared.
  const Inside = transactionView(createRepos(sqliteDialect(db, { inTransaction: true }), agentRows));
  // Prepared once, as better-sqlite3's own transactions are.
  const begin = db.$client.prepare("begin immediate");
  const commit = db.$client.prepare("commit");
  const rollback = db.$client.prepare("rollback");

  return {
    ...outside,
    dialect: "sqlite",
    transaction(fn) {
      return turns.take(async () => {
        let ended = false;
        const inside = new Inside(async (call) => {
          if (ended) throw new Error("a registry call through a transaction that has ended");
          return call();
        });
        try {
          begin.run();
          const result = await fn(inside);
          commit.run();
          return result;
        } catch (err) {
          if (db.$client.inTransaction) rollback.run();
          throw err;
        } finally {
          ended = true;
          // A row read inside may be one the transaction wrote and rolled back.
          agentRows.forget();
        }
      });
    },
    close() {
      return turns.take(async () => handle.close());
    },
  };
}
