import type { Job } from "@corral/shared";
import { useJobRelaunches } from "../hooks/use-jobs.js";
import { statusLabels } from "../lib/format/format.js";
import { Link } from "../router.js";

/** Which job this one ran again, and the jobs that ran it again (Relaunch, Edit and relaunch): nothing when neither. */
export function JobRelaunches({ job }: { job: Job }) {
  const relaunches = useJobRelaunches(job.id).data?.jobs ?? [];
  if (!job.relaunchOf && relaunches.length === 0) return null;
  return (
    <div className="small row relaunches" data-testid="relaunches">
      {job.relaunchOf && (
        <span>
          Relaunch of{" "}
          <Link to={`/jobs/${job.relaunchOf}`} className="mono">
            {job.relaunchOf}
          </Link>
        </span>
      )}
      {relaunches.length > 0 && (
        <span>
          Relaunched as{" "}
          {relaunches.map((r, i) => (
            <span key={r.id}>
              {i > 0 && ", "}
              <Link to={`/jobs/${r.id}`} className="mono">
                {r.id}
              </Link>
              <span className="muted"> ({statusLabels[r.status]})</span>
            </span>
          ))}
        </span>
      )}
    </div>
  );
}
