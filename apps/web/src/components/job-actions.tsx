import { isFinalStatus, type Job } from "@corral/shared";
import { useCancelJob, useLaunchJob } from "../hooks/use-jobs.js";
import { relaunchBody } from "../lib/domain/relaunch.js";
import { Link, navigate } from "../router.js";
import { ActionError } from "./action-error.js";

export function CancelButton({ job, small = true }: { job: Job; small?: boolean }) {
  const cancel = useCancelJob();
  if (isFinalStatus(job.status)) return null;
  return (
    <>
      <button
        type="button"
        className={`danger${small ? " small" : ""}`}
        disabled={cancel.isPending}
        onClick={() => cancel.mutate(job.id)}
        aria-label={`Cancel job ${job.id}`}
      >
        {cancel.isPending ? "Cancelling…" : "Cancel"}
      </button>
      {cancel.error && <ActionError title={`Could not cancel job ${job.id}`} message={cancel.error.message} onDismiss={() => cancel.reset()} />}
    </>
  );
}

/** Offered once a job has ended: a running job is still doing what a relaunch would start again. */
export function RelaunchButton({ job, small = true }: { job: Job; small?: boolean }) {
  const launch = useLaunchJob();
  if (!isFinalStatus(job.status)) return null;
  return (
    <>
      <button
        type="button"
        className={small ? "small" : undefined}
        disabled={launch.isPending}
        onClick={() => launch.mutate(relaunchBody(job), { onSuccess: (next) => navigate(`/jobs/${next.id}`) })}
        aria-label={`Relaunch job ${job.id} with the same inputs`}
      >
        {launch.isPending ? "Launching…" : "Relaunch"}
      </button>
      {launch.error && (
        <ActionError title={`Could not relaunch job ${job.id}`} message={launch.error.message} onDismiss={() => launch.reset()}>
          <Link to={`/launch?from=${job.id}`} className="small">
            Change its inputs and launch
          </Link>
        </ActionError>
      )}
    </>
  );
}
