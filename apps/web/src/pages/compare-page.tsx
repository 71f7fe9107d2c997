import { isFinalStatus, type Job, JobIdSchema } from "@corral/shared";
import { CompareChanges } from "../components/compare-changes.js";
import { ErrorState, Loading } from "../components/states.js";
import { AnsiText } from "../components/output-view.js";
import { StatusBadge } from "../components/status-badge.js";
import { useDocumentTitle } from "../hooks/use-document-title.js";
import { useJobFiles } from "../hooks/use-files.js";
import { useAgents } from "../hooks/use-agents.js";
import { useJob, useJobGroup, useJobOutput, useJobReadable } from "../hooks/use-jobs.js";
import { useNow } from "../hooks/use-now.js";
import { useFollowJob } from "../lib/transport/live-context.js";
import { emptyOutput } from "../lib/domain/output-buffer.js";
import { shownText } from "../lib/domain/readable-buffer.js";
import { formatDuration, formatTokens, plural, usageCost } from "../lib/format/format.js";
import { Link, useSearchParams } from "../router.js";

/** As many as one launch to several agents starts. */
const MAX_COMPARED = 32;

/**
 * `/compare?jobs=a,b,c`: those jobs, the bad and repeated ids left out; `/compare?group=<id>`: the
 * jobs launched together with that one (a job's page links there).
 */
function useComparedIds(): { ids: string[]; group: ReturnType<typeof useJobGroup> } {
  const [params] = useSearchParams();
  const groupOf = params.get("group");
  const group = useJobGroup(groupOf && JobIdSchema.safeParse(groupOf).success ? groupOf : null);
  const listed = group.data ? group.data.jobs.map((j) => j.id) : (params.get("jobs") ?? "").split(",");
  const ids = listed.filter((id) => JobIdSchema.safeParse(id).success);
  return { ids: [...new Set(ids)].slice(0, MAX_COMPARED), group };
}

/**
 * Jobs side by side (stacked on a phone): each one's answer, files changed, duration and cost, and
 * for a worktree job its branch's diff, live while they run.
 */
export function ComparePage() {
  const { ids, group } = useComparedIds();
  useDocumentTitle(`Compare ${plural(ids.length, "job")}`);
  if (group.isError) return <ErrorState error={group.error} what="the jobs launched together" onRetry={() => void group.refetch()} />;
  if (group.isLoading) return <Loading what="the jobs launched together" />;
  return (
    <>
      <div className="page-head">
        <h1>Compare {plural(ids.length, "job")}</h1>
        <Link to="/launch">Launch to several agents</Link>
      </div>
      {ids.length === 0 ? (
        <div className="empty">
          <strong>No jobs to compare</strong>
          <span>
            Tick several agents on the <Link to="/launch">Launch</Link> page: their jobs open here side by side.
          </span>
        </div>
      ) : (
        <div className="compare-grid">
          {ids.map((id) => (
            <CompareColumn key={id} id={id} />
          ))}
        </div>
      )}
    </>
  );
}

function CompareColumn({ id }: { id: string }) {
  const job = useJob(id);
  // The job's status and files stream into the cache as on its own page.
  useFollowJob(id);
  if (job.isError) {
    return (
      <section className="card compare-column" aria-label={`Job ${id}`}>
        <ErrorState error={job.error} what={`job ${id}`} onRetry={() => void job.refetch()} />
      </section>
    );
  }
  if (!job.data) {
    return (
      <section className="card compare-column" aria-label={`Job ${id}`}>
        <Loading what={`job ${id}`} />
      </section>
    );
  }
  return <CompareCard job={job.data} />;
}

/**
 * A job's output as its own page shows it: the Readable view's lines when its agent's kind reads
 * its events (never a CLI's JSON), else the output as printed; streamed while the job runs.
 */
function useShownOutput(job: Job, wanted: boolean): string {
  const running = !isFinalStatus(job.status);
  const output = useJobOutput(job.id, running);
  const agents = useAgents();
  const readableKind = agents.data?.find((a) => a.name === job.agent)?.readable === true;
  // A column that shows the answer reads no Readable view.
  const readable = useJobReadable(job.id, readableKind && wanted, output.data);
  // Until the agents say whether this one reads as events, its raw JSON is not shown for a moment.
  if (!agents.data) return "";
  return shownText(readableKind ? readable.data : (output.data ?? emptyOutput()));
}

function CompareCard({ job }: { job: Job }) {
  const now = useNow();
  const answered = job.status === "succeeded" && Boolean(job.finalText);
  const output = useShownOutput(job, !answered);
  const files = useJobFiles(job);
  const ended = isFinalStatus(job.status);
  const took = job.startedAt ? formatDuration((job.endedAt ?? now) - job.startedAt) : "not started";
  const tokens = (job.usage.inputTokens ?? 0) + (job.usage.outputTokens ?? 0);
  const cost = usageCost(job.usage);
  const changed = files.data?.files ?? [];

  return (
    <section className="card compare-column stack" aria-label={`${job.agent}, job ${job.id}`}>
      <div className="compare-head">
        <h2>{job.agent}</h2>
        <StatusBadge status={job.status} />
      </div>
      <dl className="facts">
        <dt>Duration</dt>
        <dd>{took}</dd>
        <dt>Cost</dt>
        <dd>
          {cost}
          {tokens > 0 && <span className="muted"> · {formatTokens(tokens)} tokens</span>}
        </dd>
        <dt>Model</dt>
        <dd>{job.usage.model ?? job.model ?? "default"}</dd>
        <dt>Job</dt>
        <dd>
          <Link to={`/jobs/${job.id}`}>{job.id}</Link>
        </dd>
      </dl>
      <div>
        <h3>Files changed</h3>
        {changed.length === 0 ? (
          <p className="muted small">{ended ? "None" : "None yet"}</p>
        ) : (
          <ul className="compare-files">
            {changed.map((f) => (
              <li key={f.path}>
                <span className={`change-${f.change}`}>{f.change}</span> <code>{f.path}</code>
              </li>
            ))}
          </ul>
        )}
      </div>
      <div>
        <h3>{answered ? "Answer" : ended ? "Output" : "Output so far"}</h3>
        {job.error && <p className="error">{job.error}</p>}
        {answered ? (
          <AnsiText text={job.finalText ?? ""} />
        ) : output ? (
          <AnsiText text={output} keep="end" />
        ) : (
          <p className="muted small">{ended ? "No output" : "Waiting for output…"}</p>
        )}
      </div>
      <CompareChanges job={job} />
    </section>
  );
}
