import { isFinalStatus, type Job, type JobFile } from "@corral/shared";
import type { ReactNode } from "react";
import { ApiRequestError } from "../api/client.js";
import { CopyBlock } from "../components/copy-button.js";
import { CancelButton, RelaunchButton } from "../components/job-actions.js";
import { AnsiText, OutputView } from "../components/output-view.js";
import { ErrorState, Loading } from "../components/states.js";
import { StatusBadge } from "../components/status-badge.js";
import { useAgents } from "../hooks/use-agents.js";
import { useJob, useJobOutput, useJobReadable } from "../hooks/use-jobs.js";
import { useNow } from "../hooks/use-now.js";
import { formatBytes, formatCost, formatDuration, formatClock, formatTokens, shellQuote, statusLabels } from "../lib/format/format.js";
import { useFollowJob } from "../lib/transport/live-context.js";
import { useJobFiles } from "../hooks/use-files.js";
import { emptyOutput } from "../lib/domain/output-buffer.js";
import { emptyReadable } from "../lib/domain/readable-buffer.js";
import { Link } from "../router.js";

function Timeline({ job, now }: { job: Job; now: number }) {
  const steps: { label: string; at: number | null; note?: string }[] = [
    { label: "queued", at: job.createdAt, note: `from ${job.origin}` },
    { label: "started", at: job.startedAt, note: job.pid ? `pid ${job.pid}` : undefined },
  ];
  if (isFinalStatus(job.status)) {
    steps.push({
      label: statusLabels[job.status],
      at: job.endedAt,
      note: job.exitCode !== null ? `exit code ${job.exitCode}` : undefined,
    });
  }
  return (
    <ol className="timeline" aria-label="Status timeline">
      {steps.map((s) => (
        <li key={s.label}>
          <span className="when" title={s.at ? new Date(s.at).toLocaleString() : undefined}>
            {s.at ? formatClock(s.at, now) : "—"}
          </span>
          <strong>{s.label}</strong>
          {s.note && <span className="muted small">{s.note}</span>}
        </li>
      ))}
      {!isFinalStatus(job.status) && (
        <li>
          <span className="when">now</span>
          <strong>{statusLabels[job.status]}</strong>
          <span className="muted small">for {formatDuration(now - (job.startedAt ?? job.createdAt))}</span>
        </li>
      )}
    </ol>
  );
}

function fileLink(job: Job, file: JobFile): string {
  const full = `${job.workdir.replace(/\/$/, "")}/${file.path}`;
  return `/files?workdir=${encodeURIComponent(job.workdir)}&path=${encodeURIComponent(full)}`;
}

function JobFilesSection({ job }: { job: Job }) {
  const files = useJobFiles(job);
  // Files already listed stay while the server is away (the page says so above).
  if (files.isError && !files.data) return <ErrorState error={files.error} what="this job's files" />;
  if (files.isPending) return <Loading what="files" />;
  if (files.data.files.length === 0) {
    return (
      <p className="muted small">
        {isFinalStatus(job.status) ? "This job created, changed or deleted no files." : "No file changes yet."}{" "}
        <Link to={`/files?workdir=${encodeURIComponent(job.workdir)}`}>Browse the workdir</Link>
      </p>
    );
  }
  return (
    <ul className="tree" aria-label="Files changed by this job">
      {files.data.files.map((f) => (
        <li key={f.path} className="row">
          <span className={`badge ${f.change === "created" ? "ok" : f.change === "modified" ? "warn" : "bad"}`}>{f.change}</span>
          {f.change === "deleted" ? (
            <span className={`mono change-${f.change}`}>{f.path}</span>
          ) : (
            <Link to={fileLink(job, f)} className="mono">
              {f.path}
            </Link>
          )}
          {f.size !== null && <span className="size">{formatBytes(f.size)}</span>}
        </li>
      ))}
    </ul>
  );
}

function UsageSection({ job }: { job: Job }) {
  const u = job.usage;
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
        {u.costUsd === null && u.inputTokens === null && u.outputTokens === null ? "not reported by this worker" : formatCost(u.costUsd)}
        {u.costSource && <span className="muted small"> ({u.costSource})</span>}
        {u.costUsd === null && (u.inputTokens !== null || u.outputTokens !== null) && (
          <span className="muted small"> — no price known for this model, so not counted as free</span>
        )}
      </dd>
    </dl>
  );
}

function Card({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section className="card" aria-labelledby={id}>
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
        Showing what was loaded by {formatClock(loadedAt, now)}
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
  const readableKind = agents.data?.find((a) => a.name === job.data?.agent)?.readable === true;
  const readable = useJobReadable(id, readableKind, output.data);
  const now = useNow(1000);

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
  const command = j.invocation ? [j.invocation.command, ...j.invocation.args].map(shellQuote).join(" ") : null;

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
            {j.model ? ` · ${j.model}` : ""}
          </span>
          {j.startedAt && <span className="muted small mono">{formatDuration((j.endedAt ?? now) - j.startedAt)}</span>}
        </div>
        <div className="row">
          <CancelButton job={j} small={false} />
          <RelaunchButton job={j} small={false} />
          <Link to={`/launch?from=${j.id}`} className="button">
            Edit and relaunch
          </Link>
        </div>
      </div>
      {offline && <OfflineBanner error={job.error ?? output.error} loadedAt={job.dataUpdatedAt} now={now} />}
      {j.error && (
        <div className="alert" role="alert" style={{ marginBottom: "0.75rem" }}>
          <strong>{statusLabels[j.status]}</strong>
          <p style={{ whiteSpace: "pre-wrap" }}>{j.error}</p>
        </div>
      )}
      <section aria-labelledby="output-heading">
        <h2 id="output-heading">Output</h2>
        {output.isError && !output.data ? (
          <ErrorState error={output.error} what="the output" onRetry={() => void output.refetch()} />
        ) : (
          <OutputView buffer={output.data ?? emptyOutput()} running={running} readable={readableKind ? (readable.data ?? emptyReadable()) : null} />
        )}
      </section>
      <div className="grid-2" style={{ marginTop: "0.75rem" }}>
        <Card id="timeline-heading" title="Timeline">
          <Timeline job={j} now={now} />
        </Card>
        <Card id="usage-heading" title="Usage and cost">
          <UsageSection job={j} />
        </Card>
        <Card id="files-heading" title="Files">
          <p className="small muted mono" style={{ marginTop: 0 }}>
            {j.workdir}
          </p>
          <JobFilesSection job={j} />
        </Card>
        <Card id="command-heading" title="Command">
          {command ? (
            <>
              <CopyBlock text={command} label="The exact command that ran" />
              <p className="small muted">in {j.invocation?.cwd}</p>
            </>
          ) : (
            <p className="muted small">{j.status === "queued" ? "Not started yet." : "This agent runs in-process (no command line)."}</p>
          )}
        </Card>
      </div>
      <section aria-labelledby="prompt-heading">
        <h2 id="prompt-heading">Prompt</h2>
        <CopyBlock text={j.prompt} label="Prompt" />
      </section>
      {j.finalText && (
        <section aria-labelledby="final-heading">
          <h2 id="final-heading">Answer</h2>
          <AnsiText text={j.finalText} />
        </section>
      )}
    </>
  );
}
