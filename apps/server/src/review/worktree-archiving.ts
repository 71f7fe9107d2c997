import type { WorktreeService } from "./worktree-service.js";

/** How often worktrees left unreviewed are looked for: the policy counts days, an hour is close enough. */
const SWEEP_MS = 60 * 60 * 1000;

/**
 * Archives worktrees left unreviewed past `keepMs` (WorktreeService.archiveAbandoned): once now,
 * then every hour, one sweep at a time. Returns the function that stops it.
 */
export function keepArchivingWorktrees(
  worktrees: Pick<WorktreeService, "archiveAbandoned">,
  keepMs: number,
  log: { info(message: string): void; warn(message: string): void },
): () => void {
  let sweeping = false;
  const sweep = () => {
    if (sweeping) return;
    sweeping = true;
    worktrees
      .archiveAbandoned(keepMs, Date.now(), (message) => log.warn(message))
      .then((archived) => {
        if (archived.length)
          log.info(`archived the worktrees of ${archived.length} job(s) left unreviewed: ${archived.join(", ")} (their branches keep every change)`);
      })
      .catch((err: unknown) => log.warn(`could not look for unreviewed worktrees: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        sweeping = false;
      });
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_MS);
  timer.unref();
  return () => clearInterval(timer);
}
