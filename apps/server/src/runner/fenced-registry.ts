import type { Registry, Repos } from "../db/registry.js";

/**
 * The registry as runner `runner` writes to it: every change to a job is made only while the job
 * is still its own and not declared `lost` (jobs.updateClaimed), so a runner that fell silent and
 * was given up on cannot overwrite that decision when it comes back. Everything else is the registry.
 */
export function fencedRegistry(registry: Registry, runner: string): Registry {
  const fence = <R extends Repos>(repos: R): R =>
    new Proxy(repos, {
      get(target, key, receiver) {
        if (key !== "jobs") return Reflect.get(target, key, receiver);
        const jobs = target.jobs;
        return { ...jobs, update: (id: string, patch: Parameters<Repos["jobs"]["update"]>[1]) => jobs.updateClaimed(id, runner, patch) };
      },
    });
  const fenced = fence(registry);
  return new Proxy(fenced, {
    get(target, key, receiver) {
      if (key !== "transaction") return Reflect.get(target, key, receiver);
      return <T>(fn: (tx: Repos) => Promise<T>) => registry.transaction((tx) => fn(fence(tx)));
    },
  });
}
