import type { Registry, Repos } from "../db/registry.js";

type JobFileRows = Parameters<Repos["jobFiles"]["upsert"]>[0];

/**
 * The registry as runner `runner` writes to it: every change to a job, and every file change it
 * records for one, is made only while the job is still its own and not declared `lost`
 * (jobs.updateClaimed; the job read in the same transaction as the file write), so a runner that
 * fell silent and was given up on cannot overwrite that decision when it comes back. A job keeps
 * the workdir it was launched with (the path resolved on this machine is this machine's business:
 * a runner's login may not change what a job was launched with), except that the worktree it makes
 * for a worktree job becomes the job's workdir, as on the server (the registry's trigger holds it
 * to the worktree's own place beside the repository). Everything else is the registry.
 */
export function fencedRegistry(registry: Registry, runner: string): Registry {
  const holds = async (tx: Repos, jobId: string) => {
    const job = await tx.jobs.get(jobId);
    return job?.runner === runner && job.status !== "lost";
  };
  const upsertHeld = async (tx: Repos, rows: JobFileRows) => {
    const held = new Set<string>();
    for (const jobId of new Set(rows.map((row) => row.jobId))) if (await holds(tx, jobId)) held.add(jobId);
    await tx.jobFiles.upsert(rows.filter((row) => held.has(row.jobId)));
  };
  const removeHeld = async (tx: Repos, jobId: string, paths: string[]) => {
    if (await holds(tx, jobId)) await tx.jobFiles.remove(jobId, paths);
  };
  /** `inTransaction`: how a read and its write share one transaction (the repositories given are one already, or the registry opens one). */
  const fence = <R extends Repos>(repos: R, inTransaction: <T>(fn: (tx: Repos) => Promise<T>) => Promise<T>): R =>
    new Proxy(repos, {
      get(target, key, receiver) {
        if (key === "jobs") {
          const jobs = target.jobs;
          return {
            ...jobs,
            update: (id: string, { workdir, ...patch }: Parameters<Repos["jobs"]["update"]>[1]) =>
              jobs.updateClaimed(id, runner, patch.worktree?.state === "active" && workdir === patch.worktree.path ? { ...patch, workdir } : patch),
          };
        }
        if (key === "jobFiles") {
          return {
            ...target.jobFiles,
            upsert: (rows: JobFileRows) => inTransaction((tx) => upsertHeld(tx, rows)),
            remove: (jobId: string, paths: string[]) => inTransaction((tx) => removeHeld(tx, jobId, paths)),
          };
        }
        return Reflect.get(target, key, receiver);
      },
    });
  const fenced = fence(registry, (fn) => registry.transaction(fn));
  return new Proxy(fenced, {
    get(target, key, receiver) {
      if (key !== "transaction") return Reflect.get(target, key, receiver);
      return <T>(fn: (tx: Repos) => Promise<T>) => registry.transaction((tx) => fn(fence(tx, (inner) => inner(tx))));
    },
  });
}
