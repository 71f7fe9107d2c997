/**
 * A repository's interface whatever holds the registry: the same methods, parameters and rows as
 * the SQLite repository, each answering a Promise. PostgreSQL answers over the network, so every
 * dialect's repositories answer this way; the SQLite ones simply answer at once.
 */
export type Async<R> = {
  [K in keyof R]: R[K] extends (...args: infer A) => infer T ? (...args: A) => Promise<Awaited<T>> : R[K];
};
