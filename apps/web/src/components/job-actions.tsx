import { isFinalStatus, type Job } from "@corral/shared";
import { ApiRequestError } from "../api/client.js";
import { useCancelJob, useLaunchJob } from "../hooks/use-jobs.js";
import { panelErrors } from "../lib/domain/api-errors.js";
import { relaunchBody } from "../lib/domain/relaunch.js";
import { Link, navigate } from "../router.js";
import { ActionError } from "./action-error.js";
import { ErrorActionView } from "./error-action.js";

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
  const relaunch = () => launch.mutate(relaunchBody(job), { onSuccess: (next) => navigate(`/jobs/${next.id}`) });
  // A refusal the Launch form would offer an action for (its agent disabled, its budget used up) offers it here too.
  const action = launch.error instanceof ApiRequestError ? panelErrors(launch.error).find((e) => e.action)?.action : undefined;
  return (
    <>
      <button
        type="button"
        className={small ? "small" : undefined}
        disabled={launch.isPending}
        onClick={relaunch}
        aria-label={`Relaunch job ${job.id} with the same inputs`}
      >
        {launch.isPending ? "Launching…" : "Relaunch"}
      </button>
      {launch.error && (
        <ActionError title={`Could not relaunch job ${job.id}`} message={launch.error.message} onDismiss={() => launch.reset()}>
          <ErrorActionView
            action={action}
            then="and relaunch"
            onEnabled={() => {
              launch.reset();
              relaunch();
            }}
          />{" "}
          <Link to={`/launch?from=${job.id}`} className="small">
            Change its inputs and launch
          </Link>
        </ActionError>
      )}
    </>
  );
}
