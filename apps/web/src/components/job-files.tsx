import { isFinalStatus, type Job, type JobFile } from "@corral/shared";
import { useJobFiles } from "../hooks/use-files.js";
import { worktreeFolderGone } from "../lib/domain/worktree-change.js";
import { formatBytes } from "../lib/format/format.js";
import { Link } from "../router.js";
import { ErrorState, Loading } from "./states.js";

function fileLink(job: Job, file: JobFile): string {
  const full = `${job.workdir.replace(/\/$/, "")}/${file.path}`;
  return `/files?workdir=${encodeURIComponent(job.workdir)}&path=${encodeURIComponent(full)}`;
}

/**
 * The job page's Files card: what the job created, changed or deleted, each file opening in the
 * workdir browser. A worktree job whose folder is gone (merged, discarded, archived) lists its files
 * without links, and says where its change is instead.
 */
export function JobFilesSection({ job }: { job: Job }) {
  const files = useJobFiles(job);
  const gone = worktreeFolderGone(job);
  // Files already listed stay while the server is away (the page says so above).
  if (files.isError && !files.data) return <ErrorState error={files.error} what="this job's files" />;
  if (files.isPending) return <Loading what="files" />;
  if (files.data.files.length === 0) {
    return (
      <p className="muted small">
        {isFinalStatus(job.status) ? "This job created, changed or deleted no files." : "No file changes yet."}{" "}
        {gone ?? <Link to={`/files?workdir=${encodeURIComponent(job.workdir)}`}>Browse the workdir</Link>}
      </p>
    );
  }
  const { cutAt } = files.data;
  return (
    <>
      {gone && (
        <p className="muted small" role="note">
          {gone}
        </p>
      )}
      {cutAt ? (
        <p className="muted small" role="note">
          More than {cutAt.toLocaleString("en")} files changed; the list stops here, and the job was no longer watched.
        </p>
      ) : null}
      <ul className="tree" aria-label="Files changed by this job">
        {files.data.files.map((f) => (
          <li key={f.path} className="row">
            <span className={`badge ${f.change === "created" ? "ok" : f.change === "modified" ? "warn" : "bad"}`}>{f.change}</span>
            {f.change === "deleted" || gone ? (
              <span className={f.change === "deleted" ? "mono change-deleted" : "mono"}>{f.path}</span>
            ) : (
              <Link to={fileLink(job, f)} className="mono">
                {f.path}
              </Link>
            )}
            {f.size !== null && <span className="size">{formatBytes(f.size)}</span>}
          </li>
        ))}
      </ul>
    </>
  );
}
