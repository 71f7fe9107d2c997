import { isFinalStatus, type Job, type JobAttempt } from "@corral/shared";
import { lazy, type ReactNode, Suspense } from "react";
import { ApiRequestError } from "../api/client.js";
import { CopyBlock } from "../components/copy-button.js";
import { CancelButton, RelaunchButton } from "../components/job-actions.js";
import { JobFilesSection } from "../components/job-files.js";
import { JobRelaunches } from "../components/job-relaunches.js";
import { JobThread } from "../components/job-thread.js";
import { AnsiText, OutputView } from "../components/output-view.js";
import { ErrorState, Loading } from "../components/states.js";
import { StatusBadge } from "../components/status-badge.js";
import { When } from "../components/when.js";
import { useAgents } from "../hooks/use-agents.js";
import { useRunnerName } from "../hooks/use-runners.js";
import { useJob, useJobAttempts, useJobOutput, useJobReadable } from "../hooks/use-jobs.js";
import { useDocumentTitle } from "../hooks/use-document-title.js";
import { useWaitingReason } from "../hooks/use-waiting.js";
import { useNow } from "../hooks/use-now.js";
import { commandCard } from "../lib/domain/job-command.js";
import { cancelledBy, timelineSteps } from "../lib/domain/job-timeline.js";
import { formatDuration, formatTokens, formatUsd, formatWhen, jobTabTitle, statusLabels, usageCost } from "../lib/format/format.js";
import { useFollowJob } from "../lib/transport/live-context.js";
import { emptyOutput } from "../lib/domain/output-buffer.js";
import { emptyReadable } from "../lib/domain/readable-buffer.js";
import { Link } from "../router.js";

// The diff renderer is large and only worktree jobs need it: loaded when one is shown.
const JobChanges = lazy(async () => ({ default: (await import("../components/job-changes.js")).JobChanges }));

function Timeline({ job, attempts, now }: { job: Job; attempts: JobAttempt[]; now: number }) {
  const runnerName = useRunnerName(job.runner);
  return (
    <ol className="timeline" aria-label="Status timeline">
      {timelineSteps(job, runnerName, attempts).map((s) => (
        <li key={s.key} data-step={s.key}>
          <When at={s.at} now={now} />
          <span>
            <strong className={s.tone ? `step-${s.tone}` : undefined}>{s.label}</strong>
            {s.note && <span className="muted small"> {s.note}</span>}
          </span>
        </li>
      ))}
      {!isFinalStatus(job.status) && (
        <li data-step="now">
          <span className="when">now</span>
          <span>
            <strong>{statusLabels[job.status]}</strong>
            <span className="muted small"> for {formatDuration(now - (job.startedAt ?? job.createdAt))}</span>
          </span>
        </li>
      )}
    </ol>
  );
}

/** Why the job ended as it did: an error for a failure, a plain notice for a cancel someone asked for. */
function Outcome({ job, now }: { job: Job; now: number }) {
  const waiting = useWaitingReason(job, now);
  if (waiting) {
    return (
      <div className="alert neutral job-outcome" role="status">
        <strong>Queued {formatDuration(now - job.createdAt)}</strong>
        <p>{waiting}</p>
      </div>
    );
  }
  if (job.status === "cancelled") {
    return (
      <div className="alert cancelled job-outcome" role="status">
        <strong>Cancelled</strong>
        <p>
          {/* Jobs cancelled before the request was recorded have only their error to go by. */}
          {job.cancel
            ? `Cancel requested ${cancelledBy(job.cancel)}, ${formatWhen(job.cancel.at, now)}${job.startedAt === null ? "; it never started." : "."}`
            : job.error}
          {job.killedAt !== null && " Its worker did not stop within the grace period after SIGTERM and was killed (SIGKILL)."}
        </p>
      </div>
    );
  }
  if (!job.error) return null;
  return (
    <div className="alert job-outcome" role="alert">
      <strong>{statusLabels[job.status]}</strong>
      <p style={{ whiteSpace: "pre-wrap" }}>{job.error}</p>
    </div>
  );
}

function CommandSection({ job }: { job: Job }) {
  const agents = useAgents();
  const card = commandCard(
    job,
    agents.data?.find((a) => a.name === job.agent),
  );
  switch (card.kind) {
    case "command":
      return (
        <>
          <CopyBlock text={card.line} label="The exact command that ran" />
          <p className="small muted">in {card.cwd}</p>
        </>
      );
    case "waiting":
      return (
        <p className="muted small">
          Not started yet: the command line is shown once its worker starts.
          {card.unavailable && (
            <>
              {" "}
              It cannot start as things stand: {card.unavailable}. <Link to="/agents">See the agents</Link>.
            </>
          )}
        </p>
      );
    case "in-process":
      return <p className="muted small">No command line: this agent runs inside Corral{card.server ? `, talking to ${card.server}` : ""}.</p>;
    case "not-started":
      return (
        <p className="muted small">
          No command ran. {card.reason}
          {card.hint && (
            <>
              {" "}
              {card.hint}. <Link to="/agents">See the agents</Link>.
            </>
          )}
        </p>
      );
  }
}

/** Each attempt's own tokens and cost, under the job's (their sum). */
function AttemptUsage({ attempts }: { attempts: JobAttempt[] }) {
  return (
    <table className="small" aria-label="Usage per attempt">
      <thead>
        <tr>
          <th>Attempt</th>
          <th className="num">In</th>
          <th className="num">Out</th>
          <th className="num">Cost</th>
        </tr>
      </thead>
      <tbody>
        {attempts.map((a) => (
          <tr key={a.attempt}>
            <td>
              {a.attempt} · {statusLabels[a.status]}
            </td>
            <td className="num">{formatTokens(a.usage.inputTokens)}</td>
            <td className="num">{formatTokens(a.usage.outputTokens)}</td>
            <td className="num">
              {usageCost(a.usage)}
              {a.usage.costSource && <span className="muted"> ({a.usage.costSource})</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function UsageSection({ job, attempts }: { job: Job; attempts: JobAttempt[] }) {
  const u = job.usage;
  return (
    <>
      <UsageFacts job={job} u={u} />
      {attempts.length > 1 && (
        <>
          <p className="small muted">The sum of its {attempts.length} attempts:</p>
          <AttemptUsage attempts={attempts} />
        </>
      )}
    </>
  );
}

function UsageFacts({ job, u }: { job: Job; u: Job["usage"] }) {
  return (
    <dl className="facts">
      <dt>Model</dt>
      <dd>{u.model ?? job.model ?? "the agent's default"}</dd>
      <dt>Tokens in</dt>
      <dd>
        {formatTokens(u.inputTokens)}
        {u.cachedInputTokens ? <span className="muted small"> ({formatTokens(u.cachedInputTokens)} cached)</span> : null}
      </dd>
      <dt>Tokens out</dt>
      <dd>{formatTokens(u.outputTokens)}</dd>
      <dt>Cost</dt>
      <dd>
        {usageCost(u, "not reported by this worker")}
        {u.costSource && <span className="muted small"> ({u.costSource})</span>}
        {u.costUsd === null && (u.inputTokens !== null || u.outputTokens !== null) && (
          <span className="muted small"> — no price known for this model, so not counted as free</span>
        )}
      </dd>
      {(job.limits.maxCostUsd !== null || job.limits.maxTokens !== null) && (
        <>
          <dt>Limits</dt>
          <dd>
            {[
              job.limits.maxCostUsd !== null ? `${formatUsd(job.limits.maxCostUsd)} cost` : null,
              job.limits.maxTokens !== null ? `${formatTokens(job.limits.maxTokens)} tokens` : null,
            ]
              .filter(Boolean)
              .join(" · ")}
            {/* A cost limit on a job whose cost is unknown cannot stop it: said, not left to be believed. */}
            {job.limits.maxCostUsd !== null && u.costUsd === null && (u.inputTokens !== null || u.outputTokens !== null) && (
              <span className="muted small"> — with no price known for this model, its cost limit cannot stop it</span>
            )}
          </dd>
        </>
      )}
    </dl>
  );
}

function Card({ id, title, wide = false, children }: { id: string; title: string; wide?: boolean; children: ReactNode }) {
  return (
    <section className={wide ? "card wide" : "card"} aria-labelledby={id}>
      <h2 id={id} style={{ marginTop: 0 }}>
        {title}
      </h2>
      {children}
    </section>
  );
}

/**
 * The server stopped answering while the job was shown: what was loaded stays, under this note,
 * and the page catches up from where it stopped (the output by its cursor) once the server is back.
 */
function OfflineBanner({ error, loadedAt, now }: { error: unknown; loadedAt: number; now: number }) {
  const unreachable = error instanceof TypeError || (error instanceof ApiRequestError && error.status >= 500);
  return (
    <div className="alert warn" role="status" style={{ marginBottom: "0.75rem" }}>
      <strong>{unreachable ? "The Corral server is not answering." : "This job could not be refreshed."}</strong>
      <p>
        Showing what was loaded {formatWhen(loadedAt, now)}
        {unreachable ? "" : ` (${error instanceof Error ? error.message : String(error)})`}. The page catches up by itself when the server is back.
      </p>
    </div>
  );
}

export function JobDetailPage({ id }: { id: string }) {
  useFollowJob(id);
  const job = useJob(id);
  const running = job.data ? !isFinalStatus(job.data.status) : false;
  const output = useJobOutput(id, running);
  // Agents whose kind reads its workers' events get a Readable view, read on the server.
  const agents = useAgents();
  const agent = agents.data?.find((a) => a.name === job.data?.agent);
  const readableKind = agent?.readable === true;
  const answerIsOutput = agent?.answerIsOutput === true;
  const readable = useJobReadable(id, readableKind, output.data);
  const attempts = useJobAttempts(job.data).data?.attempts ?? [];
  const now = useNow(1000);
  useDocumentTitle(job.data ? jobTabTitle(job.data) : null);

  // Without a job to show (or with a signed-out browser), the error is the page; otherwise it is a note above what was loaded.
  if (job.isError && (!job.data || (job.error instanceof ApiRequestError && job.error.unauthorized))) {
    return (
      <>
        <p>
          <Link to="/">← Jobs</Link>
        </p>
        <ErrorState error={job.error} what={`job ${id}`} onRetry={() => void job.refetch()} />
      </>
    );
  }
  if (job.isPending) return <Loading what={`job ${id}`} />;
  const j = job.data;
  const offline = job.isError || output.isError;

  return (
    <>
      <p className="small">
        <Link to="/">← Jobs</Link>
      </p>
      <div className="page-head">
        <div className="row">
          <h1 className="mono">{j.id}</h1>
          <StatusBadge status={j.status} />
          <span className="muted">
            {j.agent}
            {/* The model that ran, as the Usage card says it: the one asked for, or the agent's default as the worker reported it. */}
            {(j.usage.model ?? j.model) ? ` · ${j.usage.model ?? j.model}` : ""}
          </span>
          {j.startedAt && <span className="muted small mono">{formatDuration((j.endedAt ?? now) - j.startedAt)}</span>}
        </div>
        <div className="row">
          <CancelButton job={j} small={false} />
          <RelaunchButton job={j} small={false} />
          {j.groupId && (
            <Link to={`/compare?group=${j.groupId}`} className="button">
              Compare with the agents launched with it
            </Link>
          )}
          <Link to={`/launch?from=${j.id}`} className="button">
            Edit and relaunch
          </Link>
        </div>
      </div>
      <JobRelaunches job={j} />
      {offline && <OfflineBanner error={job.error ?? output.error} loadedAt={job.dataUpdatedAt} now={now} />}
      <Outcome job={j} now={now} />
      <section aria-labelledby="output-heading">
        <h2 id="output-heading">Output</h2>
        {output.isError && !output.data ? (
          <ErrorState error={output.error} what="the output" onRetry={() => void output.refetch()} />
        ) : (
          <OutputView
            buffer={output.data ?? emptyOutput()}
            running={running}
            readable={readableKind ? (readable.data ?? emptyReadable()) : null}
            readableError={readable.isError ? readable.error : null}
          />
        )}
      </section>
      <div className="job-cards">
        <Card id="timeline-heading" title="Timeline">
          <Timeline job={j} attempts={attempts} now={now} />
        </Card>
        <Card id="usage-heading" title="Usage and cost">
          <UsageSection job={j} attempts={attempts} />
        </Card>
        {j.worktree && (
          <Card id="changes-heading" title="Changes" wide>
            <Suspense fallback={<Loading what="the changes" />}>
              <JobChanges job={j} />
            </Suspense>
          </Card>
        )}
        <Card id="files-heading" title="Files">
          <p className="small muted mono" style={{ marginTop: 0 }}>
            {j.workdir}
          </p>
          <JobFilesSection job={j} />
        </Card>
        <Card id="command-heading" title="Command" wide>
          <CommandSection job={j} />
        </Card>
      </div>
      <section aria-labelledby="prompt-heading">
        <h2 id="prompt-heading">Prompt</h2>
        <CopyBlock text={j.prompt} label="Prompt" />
      </section>
      {/* A plain-text CLI's answer is its output, shown above: not a second time. */}
      {j.finalText && !answerIsOutput && (
        <section aria-labelledby="final-heading">
          <h2 id="final-heading">Answer</h2>
          <AnsiText text={j.finalText} />
        </section>
      )}
      <section aria-labelledby="thread-heading">
        <h2 id="thread-heading">Follow-ups</h2>
        <JobThread job={j} />
      </section>
    </>
  );
}
