import type { Job } from "@corral/shared";
import { useState, type FormEvent } from "react";
import { ApiRequestError } from "../api/client.js";
import { useAgents } from "../hooks/use-agents.js";
import { useJobThread, useLaunchJob } from "../hooks/use-jobs.js";
import { panelErrors, type PanelError } from "../lib/domain/api-errors.js";
import { replyBody } from "../lib/domain/relaunch.js";
import { replyBlocked } from "../lib/domain/thread.js";
import { Link, navigate } from "../router.js";
import { describedBy, Field } from "./field.js";
import { AnsiText } from "./output-view.js";
import { ErrorState, Loading } from "./states.js";
import { StatusBadge } from "./status-badge.js";

function errorsOf(error: unknown): PanelError[] {
  if (!error) return [];
  if (error instanceof ApiRequestError) return panelErrors(error);
  return [{ field: null, text: error instanceof Error ? error.message : String(error) }];
}

/** Continues the thread's last job: a follow-up launched with it as `session`, opened once queued. */
function ReplyBox({ last }: { last: Job }) {
  const agents = useAgents();
  const agent = agents.data?.find((a) => a.name === last.agent);
  const launch = useLaunchJob();
  const [prompt, setPrompt] = useState("");
  const blocked = replyBlocked(last, agent);
  if (blocked && agent && !agent.resumes) {
    return (
      <p className="muted small" data-testid="reply-unavailable">
        {blocked}
      </p>
    );
  }
  const errors = errorsOf(launch.error);
  const promptError = errors.find((e) => e.field === "prompt")?.text;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (blocked || !prompt.trim() || launch.isPending) return;
    launch.mutate(replyBody(last, prompt), {
      onSuccess: (next) => {
        setPrompt("");
        navigate(`/jobs/${next.id}`);
      },
    });
  };
  return (
    <form className="reply stack" onSubmit={submit} noValidate aria-label="Reply with a follow-up">
      <Field
        id="reply-prompt"
        label="Reply"
        error={promptError}
        hint={blocked ?? `Continues job ${last.id} with ${last.agent}, in its workdir. Ctrl+Enter sends.`}
      >
        <textarea
          id="reply-prompt"
          rows={3}
          value={prompt}
          disabled={blocked !== null}
          onChange={(e) => setPrompt(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit(e);
          }}
          placeholder={`What ${last.agent} should do next`}
          {...describedBy("reply-prompt", promptError, true)}
        />
      </Field>
      {errors
        .filter((e) => e.field !== "prompt")
        .map((e) => (
          <div className="alert" role="alert" key={e.text}>
            <strong>The server refused this reply.</strong>
            <p>{e.text}</p>
          </div>
        ))}
      <div className="row">
        <button type="submit" className="primary" disabled={blocked !== null || launch.isPending || !prompt.trim()}>
          {launch.isPending ? "Sending…" : "Send reply"}
        </button>
      </div>
    </form>
  );
}

/**
 * A job's follow-ups: the turns of the thread it belongs to, oldest first, each with its prompt and
 * answer (long ones collapsed; this job's answer is the page's own) and a link to its job, this one
 * marked; then the Reply box.
 */
export function JobThread({ job }: { job: Job }) {
  const thread = useJobThread(job.id);
  if (thread.isError && !thread.data) return <ErrorState error={thread.error} what="this job's follow-ups" onRetry={() => void thread.refetch()} />;
  if (thread.isPending) return <Loading what="the follow-ups" />;
  // This job's own state is the live one; the thread's copy may be a poll behind.
  const jobs = thread.data.jobs.map((j) => (j.id === job.id ? job : j));
  const complete = jobs[0]?.id === thread.data.conversationId;
  const last = jobs.at(-1) ?? job;
  return (
    <>
      {!complete && (
        <p className="muted small">
          Only the latest {jobs.length} turns are listed; the first was{" "}
          <Link to={`/jobs/${thread.data.conversationId}`} className="mono">
            {thread.data.conversationId}
          </Link>
          .
        </p>
      )}
      {jobs.length > 1 && (
        <ol className="thread" aria-label="Turns, first to last">
          {jobs.map((j, i) => (
            <li key={j.id} aria-current={j.id === job.id ? "page" : undefined}>
              <span className="thread-head">
                {complete && <span className="muted small">Turn {i + 1}</span>}
                {j.id === job.id ? (
                  <strong className="mono">{j.id}</strong>
                ) : (
                  <Link to={`/jobs/${j.id}`} className="mono">
                    {j.id}
                  </Link>
                )}
                <StatusBadge status={j.status} />
                {j.id === job.id && <span className="badge neutral">this job</span>}
              </span>
              <div className="thread-text" role="group" aria-label="Prompt">
                <AnsiText text={j.prompt} />
              </div>
              {j.id !== job.id && j.finalText && (
                <div className="thread-text" role="group" aria-label="Answer">
                  <span className="muted small">Answer</span>
                  <AnsiText text={j.finalText} />
                </div>
              )}
            </li>
          ))}
        </ol>
      )}
      <ReplyBox last={last} />
    </>
  );
}
