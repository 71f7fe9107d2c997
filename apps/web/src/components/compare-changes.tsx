import { isFinalStatus, type Job } from "@corral/shared";
import { lazy, Suspense } from "react";
import { ApiRequestError } from "../api/client.js";
import { useJobChanges } from "../hooks/use-jobs.js";
import { changeSummary } from "../lib/domain/worktree-change.js";
import { ErrorState, Loading } from "./states.js";

// The diff renderer is large: it loads with the first compared job that has a diff to show.
const DiffView = lazy(async () => ({ default: (await import("./job-changes.js")).DiffView }));

/**
 * A compared job's change when it ran in a worktree: its branch, what changed, and the diff against
 * the base, unified to fit a column and scrolling within its box. Nothing for a job without one.
 */
export function CompareChanges({ job }: { job: Job }) {
  const wt = job.worktree;
  if (!wt) return null;
  return (
    <div className="stack compare-changes">
      <h3>Changes</h3>
      <p className="small">
        Branch <span className="mono">{wt.branch}</span> from <span className="mono">{wt.base}</span>
      </p>
      {wt.state === "merged" ? (
        <p className="muted small">Merged into {wt.base}. The branch is gone with its worktree, so there is no diff to show.</p>
      ) : wt.state === "discarded" ? (
        <p className="muted small">Discarded. The branch is gone with its worktree, so there is no diff to show.</p>
      ) : (
        <BranchDiff job={job} />
      )}
    </div>
  );
}

/** The diff of a branch that is still there: the worktree's, or an archived one's. */
function BranchDiff({ job }: { job: Job }) {
  const changes = useJobChanges(job);
  const base = job.worktree?.base ?? "";
  const running = !isFinalStatus(job.status);
  if (changes.isPending) return <Loading what={`${job.agent}'s diff`} />;
  if (changes.isError) {
    // 409: the branch went (merged or discarded) before this page heard of it; the job's new state follows.
    if (changes.error instanceof ApiRequestError && changes.error.status === 409) {
      return (
        <div className="alert warn" role="status">
          <strong>The branch cannot be read any more.</strong>
          <p>{changes.error.message}</p>
        </div>
      );
    }
    return <ErrorState error={changes.error} what={`${job.agent}'s diff`} onRetry={() => void changes.refetch()} />;
  }
  const { change, diff, truncated } = changes.data;
  return (
    <>
      <p className="small">{changeSummary(change)}</p>
      {job.worktree?.state === "archived" && (
        <p className="muted small">The worktree's folder was removed after it sat unreviewed; its branch keeps every commit.</p>
      )}
      {running && <p className="muted small">The job is still running: this is its diff so far.</p>}
      {diff.trim() ? (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a diff wider or longer than its column must take focus to scroll from the keyboard
        <div className="compare-diff" tabIndex={0} role="region" aria-label={`${job.agent}'s diff`}>
          <Suspense fallback={<Loading what="the diff viewer" />}>
            <DiffView diff={diff} layout="line-by-line" />
          </Suspense>
        </div>
      ) : (
        <p className="muted small">
          No changes against {base}
          {running ? " yet" : ""}.
        </p>
      )}
      {truncated && <p className="small muted">The diff is cut at 2 MiB; the rest is on the branch.</p>}
    </>
  );
}
