import type { RemoteJobs } from "./remote-jobs.js";

/** How often the server looks for runners silent past their lease: as often as runners heartbeat. */
const SWEEP_MS = 2000;

/**
 * Ends `lost` the running jobs of runners silent past `leaseMs` (RemoteJobs.loseJobsOfSilentRunners),
 * one check at a time. Returns the function that stops watching.
 */
export function watchRunnerLeases(
  remoteJobs: Pick<RemoteJobs, "loseJobsOfSilentRunners">,
  leaseMs: number,
  onError: (err: unknown) => void,
): () => void {
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    remoteJobs
      .loseJobsOfSilentRunners(leaseMs)
      .catch(onError)
      .finally(() => {
        checking = false;
      });
  }, SWEEP_MS);
  timer.unref();
  return () => clearInterval(timer);
}
