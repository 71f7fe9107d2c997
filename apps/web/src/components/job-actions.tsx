import { isFinalStatus, type Job } from "@corral/shared";
import { useCancelJob, useLaunchJob } from "../hooks/use-jobs.js";
import { relaunchBody } from "../lib/domain/relaunch.js";
import { navigate } from "../router.js";

export function CancelButton({ job, small = true }: { job: Job; small?: boolean }) {
  const cancel = useCancelJob();
  if (isFinalStatus(job.status)) return null;
  return (
    <button
      type="button"
      className={`danger${small ? " small" : ""}`}
      disabled={cancel.isPending}
      onClick={() => cancel.mutate(job.id)}
      aria-label={`Cancel job ${job.id}`}
      title={cancel.error ? cancel.error.message : undefined}
    >
      {cancel.isPending ? "Cancelling…" : "Cancel"}
    </button>
  );
}

export function RelaunchButton({ job, small = true }: { job: Job; small?: boolean }) {
  const launch = useLaunchJob();
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
        <span className="small" role="alert" style={{ color: "var(--danger)" }}>
          {launch.error.message}
        </span>
      )}
    </>
  );
}
