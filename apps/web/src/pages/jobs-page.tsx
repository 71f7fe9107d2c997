import { JobStatusSchema, LOCAL_RUNNER, type Job, type JobStatus } from "@corral/shared";
import { useEffect, useMemo, useState } from "react";
import { CancelButton, RelaunchButton } from "../components/job-actions.js";
import { EmptyState, ErrorState, Loading } from "../components/states.js";
import { StatusBadge } from "../components/status-badge.js";
import { useAgents } from "../hooks/use-agents.js";
import { useDebounced } from "../hooks/use-debounced.js";
import { useActiveJobs, useJobActivity, useJobList } from "../hooks/use-jobs.js";
import { useNow } from "../hooks/use-now.js";
import { useRunnerName } from "../hooks/use-runners.js";
import { useWaitingReason } from "../hooks/use-waiting.js";
import { failureLine } from "../lib/domain/job-failure.js";
import { formatAgo, formatDuration, statusLabels, usageCost } from "../lib/format/format.js";
import { Link, useSearchParams } from "../router.js";

const PAGE_SIZE = 50;

function RunnerName({ id }: { id: string }) {
  return <>{useRunnerName(id)}</>;
}

function RunningCard({ job, now }: { job: Job; now: number }) {
  const activity = useJobActivity(job.id, job.status === "running");
  const waiting = useWaitingReason(job, now);
  const line = activity.data?.line ?? "";
  return (
    <article className="card running-card" aria-label={`Job ${job.id} on ${job.agent}`}>
      <div className="row">
        <StatusBadge status={job.status} />
        <strong>{job.agent}</strong>
        {job.runner !== null && job.runner !== LOCAL_RUNNER && (
          <span className="mono small muted">
            on <RunnerName id={job.runner} />
          </span>
        )}
        <span className="grow" />
        <span className="mono small" title="Elapsed">
          {job.startedAt ? formatDuration(now - job.startedAt) : `waiting ${formatDuration(now - job.createdAt)}`}
        </span>
      </div>
      <Link to={`/jobs/${job.id}`} className="truncate" title={job.prompt}>
        {job.prompt.split("\n")[0] || job.id}
      </Link>
      <div className="activity mono small" role="group" aria-label="Latest output" title={line}>
        {waiting ? <span className="muted">{waiting}</span> : line || <span className="muted">no output yet</span>}
      </div>
      <div className="row small">
        <span className="muted mono">{job.id}</span>
        {job.model && <span className="muted truncate">{job.model}</span>}
        <span className="grow" />
        <CancelButton job={job} />
      </div>
    </article>
  );
}

/** "2" or "1 running · 1 queued": the running count first, as the sidebar's badge shows it. */
function countsText(jobs: Job[]): string {
  const running = jobs.filter((j) => j.status === "running").length;
  const queued = jobs.length - running;
  return queued === 0 ? String(running) : `${running} running · ${queued} queued`;
}

function RunningSection() {
  const active = useActiveJobs();
  const now = useNow(1000);
  const jobs = active.data?.jobs ?? [];
  const sorted = useMemo(
    () => [...jobs].sort((a, b) => (a.status === b.status ? b.createdAt - a.createdAt : a.status === "running" ? -1 : 1)),
    [jobs],
  );
  return (
    <section aria-labelledby="running-heading">
      <h2 id="running-heading">Running now {jobs.length > 0 && <span className="muted small">({countsText(jobs)})</span>}</h2>
      {active.isError ? (
        <ErrorState error={active.error} what="running jobs" onRetry={() => void active.refetch()} />
      ) : active.isPending ? (
        <Loading what="running jobs" />
      ) : sorted.length === 0 ? (
        <EmptyState title="Nothing is running">
          <span>
            Workers appear here while they run. <Link to="/launch">Launch a job</Link> or call an agent's tool from your MCP client.
          </span>
        </EmptyState>
      ) : (
        <div className="running-grid">
          {sorted.map((job) => (
            <RunningCard key={job.id} job={job} now={now} />
          ))}
        </div>
      )}
    </section>
  );
}

function duration(job: Job, now: number): string {
  if (!job.startedAt) return "—";
  return formatDuration((job.endedAt ?? now) - job.startedAt);
}

/** The history's filters and page, kept in the address so a filtered view can be shared. */
function useHistoryFilters() {
  const [params, setParams] = useSearchParams();
  const agent = params.get("agent") ?? "";
  const statuses = (params.get("status") ?? "").split(",").filter((s): s is JobStatus => JobStatusSchema.safeParse(s).success);
  const page = Math.max(0, Number(params.get("page") ?? "0") || 0);
  const [text, setText] = useState(params.get("q") ?? "");
  const q = useDebounced(text, 250);
  useEffect(() => {
    if (q !== (params.get("q") ?? "")) setParams({ q: q || undefined, page: undefined });
  }, [q, params, setParams]);
  return {
    agent,
    statuses,
    page,
    text,
    q,
    setText,
    filtered: Boolean(agent || statuses.length || q),
    setAgent: (name: string) => setParams({ agent: name || undefined, page: undefined }),
    toggleStatus: (s: JobStatus) => {
      const next = statuses.includes(s) ? statuses.filter((x) => x !== s) : [...statuses, s];
      setParams({ status: next.join(",") || undefined, page: undefined });
    },
    clear: () => {
      setText("");
      setParams({ agent: undefined, status: undefined, q: undefined, page: undefined });
    },
    setPage: (n: number) => setParams({ page: n > 0 ? String(n) : undefined }),
  };
}

type HistoryFilters = ReturnType<typeof useHistoryFilters>;

function HistoryFilterBar({ filters }: { filters: HistoryFilters }) {
  const agents = useAgents();
  const { agent, statuses, text } = filters;
  return (
    <div className="filters" role="search" aria-label="Filter jobs">
      <div className="field">
        <label htmlFor="filter-agent">Agent</label>
        <select id="filter-agent" value={agent} onChange={(e) => filters.setAgent(e.target.value)}>
          <option value="">All agents</option>
          {agents.data?.map((a) => (
            <option key={a.name} value={a.name}>
              {a.name}
            </option>
          ))}
        </select>
      </div>
      <div className="field grow" style={{ minWidth: 200 }}>
        <label htmlFor="filter-q">Search</label>
        <input id="filter-q" type="search" placeholder="prompt, job id or error" value={text} onChange={(e) => filters.setText(e.target.value)} />
      </div>
      <fieldset className="field" style={{ border: 0, padding: 0, margin: 0 }}>
        <legend className="small" style={{ fontWeight: 600, marginBottom: "0.25rem" }}>
          Status
        </legend>
        <div className="row">
          {JobStatusSchema.options.map((s) => (
            <button
              key={s}
              type="button"
              className="small"
              aria-pressed={statuses.includes(s)}
              onClick={() => filters.toggleStatus(s)}
              style={statuses.includes(s) ? { background: "var(--accent)", color: "var(--accent-text)", borderColor: "var(--accent)" } : undefined}
            >
              {statusLabels[s]}
            </button>
          ))}
        </div>
      </fieldset>
      {filters.filtered && (
        <button type="button" className="link small" onClick={filters.clear}>
          Clear filters
        </button>
      )}
    </div>
  );
}

function HistoryRow({ job, now }: { job: Job; now: number }) {
  // An exit code alone is still a reason; a cancel is no failure (who cancelled is on its page).
  const failed = job.status !== "succeeded" && job.status !== "cancelled";
  const why = !failed || !job.error ? undefined : (failureLine(job.error, job.exitCode) ?? job.error.split("\n")[0]);
  return (
    <tr>
      <td className="mono card-end">
        <Link to={`/jobs/${job.id}`}>{job.id}</Link>
      </td>
      <td data-label="Agent">
        {job.agent}
        {job.runner !== null && job.runner !== LOCAL_RUNNER && (
          <div className="mono small muted" title="The runner that claimed it (the server's own jobs say nothing)">
            on <RunnerName id={job.runner} />
          </div>
        )}
      </td>
      <td data-label="Status">
        <div>
          <StatusBadge status={job.status} />
          {/* Why it did not succeed, on its row: the whole of it on hover and on its page. */}
          {why && (
            <div className="small muted truncate job-why" title={job.error ?? undefined}>
              {why}
            </div>
          )}
        </div>
      </td>
      <td data-label="Prompt" className="wide card-lead" style={{ maxWidth: 380 }}>
        <div className="truncate" title={job.prompt}>
          {job.prompt.split("\n")[0]}
        </div>
      </td>
      <td data-label="Created" className="small" title={new Date(job.createdAt).toLocaleString()}>
        {formatAgo(job.createdAt, now)}
      </td>
      <td data-label="Took" className="num small">
        {duration(job, now)}
      </td>
      <td data-label="Cost" className="num small">
        {usageCost(job.usage)}
      </td>
      <td className="card-end">
        <div className="row" style={{ flexWrap: "nowrap" }}>
          <CancelButton job={job} />
          <RelaunchButton job={job} />
        </div>
      </td>
    </tr>
  );
}

function HistoryTable({ jobs, busy }: { jobs: Job[]; busy: boolean }) {
  // A running job's "Took" counts seconds, as its card under Running now does.
  const now = useNow(jobs.some((j) => j.status === "running") ? 1000 : 5000);
  return (
    <div className="table-wrap" aria-busy={busy}>
      <table aria-label="Jobs" className="cards">
        <thead>
          <tr>
            <th>Job</th>
            <th>Agent</th>
            <th>Status</th>
            <th>Prompt</th>
            <th>Created</th>
            <th className="num">Took</th>
            <th className="num">Cost</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((job) => (
            <HistoryRow key={job.id} job={job} now={now} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A text search stops counting past a cap (`totalCapped`): the total then reads "1,050+". */
function Pager({ page, total, capped, setPage }: { page: number; total: number; capped: boolean; setPage: (n: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const more = capped ? "+" : "";
  return (
    <nav className="pager" aria-label="Pages">
      <span className="small muted">
        {page * PAGE_SIZE + 1}–{Math.min(total, (page + 1) * PAGE_SIZE)} of {total.toLocaleString()}
        {more}
      </span>
      <button type="button" className="small" disabled={page === 0} onClick={() => setPage(page - 1)}>
        ← Newer
      </button>
      <span className="small">
        Page {page + 1} of {pages.toLocaleString()}
        {more}
      </span>
      <button type="button" className="small" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>
        Older →
      </button>
    </nav>
  );
}

function HistorySection() {
  const filters = useHistoryFilters();
  const { page, filtered } = filters;
  const list = useJobList(
    { agent: filters.agent || undefined, statuses: filters.statuses, q: filters.q || undefined },
    { limit: PAGE_SIZE, offset: page * PAGE_SIZE },
  );

  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      <HistoryFilterBar filters={filters} />
      {list.isError ? (
        <ErrorState error={list.error} what="jobs" onRetry={() => void list.refetch()} />
      ) : list.isPending ? (
        <Loading what="jobs" />
      ) : list.data.jobs.length === 0 ? (
        <EmptyState title={filtered ? "No job matches these filters" : "No jobs yet"}>
          {filtered ? (
            <span>Try fewer filters.</span>
          ) : (
            <span>
              Jobs launched here or through MCP are listed with their output and cost. <Link to="/launch">Launch one</Link>.
            </span>
          )}
        </EmptyState>
      ) : (
        <>
          <HistoryTable jobs={list.data.jobs} busy={list.isFetching} />
          <Pager page={page} total={list.data.total} capped={list.data.totalCapped} setPage={filters.setPage} />
        </>
      )}
    </section>
  );
}

export function JobsPage() {
  return (
    <>
      <div className="page-head">
        <h1>Jobs</h1>
        <Link to="/launch" className="button primary">
          Launch a job
        </Link>
      </div>
      <RunningSection />
      <HistorySection />
    </>
  );
}
