import { type DiscardResult, isFinalStatus, plural, type Job } from "@corral/shared";
import { Diff2HtmlUI } from "diff2html/lib/ui/js/diff2html-ui-slim.js";
import "diff2html/bundles/css/diff2html.min.css";
import { useEffect, useRef, useState } from "react";
import { useJobChanges, useWorktreeAction } from "../hooks/use-jobs.js";
import { ActionError } from "./action-error.js";
import { CopyBlock } from "./copy-button.js";
import { ErrorState, Loading } from "./states.js";

type Layout = "line-by-line" | "side-by-side";

/**
 * The unified or split diff, drawn by diff2html (which escapes the text, and colours it with its own highlight.js):
 * a file list, then each file's hunks, read like a pull request.
 */
export function DiffView({ diff, layout }: { diff: string; layout: Layout }) {
  const target = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!target.current) return;
    const ui = new Diff2HtmlUI(target.current, diff, {
      outputFormat: layout,
      drawFileList: true,
      // Lines in git's order: pairing "similar" lines would show a change reordered.
      matching: "none",
      highlight: true,
      fileContentToggle: false,
    });
    ui.draw();
    ui.highlightCode();
    scrollableByKeyboard(target.current);
  }, [diff, layout]);
  return <div ref={target} className="diff-view" />;
}

/**
 * diff2html's file boxes scroll sideways (a split side always, a unified file when a line is
 * longer than the page): each takes focus, so the keyboard scrolls it too, and is named by its
 * file. Boxes the page's CSS keeps from scrolling (Compare's column scrolls instead) are left be.
 */
function scrollableByKeyboard(root: HTMLElement): void {
  for (const file of root.querySelectorAll<HTMLElement>(".d2h-file-wrapper")) {
    const name = file.querySelector(".d2h-file-name")?.textContent?.trim() ?? "a file";
    const boxes = [...file.querySelectorAll<HTMLElement>(".d2h-file-diff, .d2h-file-side-diff")];
    boxes.forEach((box, i) => {
      if (getComputedStyle(box).overflowX === "visible") return;
      box.tabIndex = 0;
      box.setAttribute("role", "group");
      box.setAttribute("aria-label", boxes.length === 2 ? `${name}, ${i === 0 ? "before" : "after"}` : name);
    });
  }
}

/**
 * A worktree job's change: its branch and base, where its worktree is (to open in a terminal), its
 * commits, and the diff; *Merge into <base>* and *Discard* once the job has ended. An archived
 * worktree's folder is gone but its branch is not: its diff, Merge and Discard stay. A discarded
 * branch's last commit (`head`, kept with the job) comes with the command that brings it back.
 */
export function JobChanges({ job }: { job: Job }) {
  const wt = job.worktree;
  const changes = useJobChanges(job);
  const action = useWorktreeAction();
  const [layout, setLayout] = useState<Layout>("line-by-line");
  if (!wt) return null;
  if (wt.state === "pending") {
    return (
      <p className="muted">
        Its worktree, on branch <span className="mono">{wt.branch}</span> from <span className="mono">{wt.base}</span>, is made on the machine of the
        runner that takes the job.
      </p>
    );
  }
  if (wt.state === "merged" || wt.state === "discarded") {
    // Right after the discard its answer says more (the commits that went, and none when nothing was lost); later the job's record does.
    const discarded = action.data?.action === "discard" && action.data.job.id === job.id ? action.data.discarded : null;
    return (
      <div className="stack">
        <p className="muted">
          Branch <span className="mono">{wt.branch}</span> was {wt.state === "merged" ? `merged into ${wt.base}` : "discarded"}; its worktree is gone.
        </p>
        {discarded ? (
          discarded.commits.length > 0 && <DiscardedCommits discarded={discarded} repo={wt.repo} />
        ) : wt.state === "discarded" && wt.head ? (
          <div className="stack">
            <p className="small">
              Its last commit was <span className="mono">{wt.head}</span>. Git keeps it for a while; to bring the branch back, run this in{" "}
              <span className="mono">{wt.repo}</span>:
            </p>
            <BringBack branch={wt.branch} head={wt.head} />
          </div>
        ) : null}
      </div>
    );
  }
  const archived = wt.state === "archived";
  const ended = isFinalStatus(job.status);
  const act = (kind: "merge" | "discard") => {
    const ask =
      kind === "merge"
        ? `Merge ${wt.branch} into ${wt.base}?`
        : `Discard ${wt.branch}${archived ? "" : " and its worktree"}? Its commits that are not merged are lost.`;
    // A merge names the commit whose diff is on screen: a branch that moved since is refused, not merged unseen.
    if (window.confirm(ask)) action.mutate({ id: job.id, action: kind, head: changes.data?.change.head || undefined });
  };
  return (
    <div className="stack">
      <p className="small">
        Branch <span className="mono">{wt.branch}</span> from <span className="mono">{wt.base}</span>
        {changes.data ? ` · ${plural(changes.data.change.commits.length, "commit")} · ${plural(changes.data.change.files, "file")} changed` : ""}
        {ended ? "" : " · the job is still running: uncommitted work is shown as it is now"}
      </p>
      {archived ? (
        <div className="alert warn">
          <strong>The worktree's folder was removed: it sat unreviewed for days.</strong>
          <p>
            Branch <span className="mono">{wt.branch}</span> keeps every commit. Read its diff here, then merge it into {wt.base} or discard it.
          </p>
        </div>
      ) : (
        <>
          {wt.runner && (
            <p className="small muted">
              On the machine of runner <span className="mono">{wt.runner}</span>: its diff, merge and discard go through that runner.
            </p>
          )}
          <CopyBlock text={`cd ${wt.path}`} copy={wt.path} label="The worktree's folder" />
        </>
      )}
      <div className="row">
        <button type="button" className="primary" disabled={!ended || action.isPending} onClick={() => act("merge")}>
          Merge into {wt.base}
        </button>
        <button type="button" className="danger" disabled={!ended || action.isPending} onClick={() => act("discard")}>
          Discard
        </button>
        <span className="row" role="group" aria-label="Diff layout">
          <button type="button" className="small" aria-pressed={layout === "line-by-line"} onClick={() => setLayout("line-by-line")}>
            Unified
          </button>
          <button type="button" className="small" aria-pressed={layout === "side-by-side"} onClick={() => setLayout("side-by-side")}>
            Split
          </button>
        </span>
      </div>
      {action.error && (
        <ActionError
          title={`Could not ${action.variables?.action ?? "change"} ${wt.branch}`}
          message={action.error.message}
          onDismiss={() => action.reset()}
        />
      )}
      {changes.isPending ? (
        <Loading what="the changes" />
      ) : changes.isError ? (
        <ErrorState error={changes.error} what="the changes" onRetry={() => void changes.refetch()} />
      ) : (
        <>
          {changes.data.change.commits.length > 0 && (
            <ul className="small mono" aria-label="Commits on the branch">
              {changes.data.change.commits.map((c) => (
                <li key={c}>{c}</li>
              ))}
            </ul>
          )}
          {changes.data.diff.trim() ? (
            <DiffView diff={changes.data.diff} layout={layout} />
          ) : (
            <p className="muted">No changes against {wt.base} yet.</p>
          )}
          {changes.data.truncated && <p className="small muted">The diff is cut at 2 MiB; the rest is on the branch.</p>}
        </>
      )}
    </div>
  );
}

/** What a discard just took with the branch, and the command that brings it back while git still keeps its last commit. */
export function DiscardedCommits({ discarded, repo }: { discarded: DiscardResult; repo: string }) {
  const { branch, commits, head } = discarded;
  return (
    <div className="alert warn" role="status">
      <strong>
        {plural(commits.length, "unmerged commit")} went with {branch}.
      </strong>
      <ul className="small mono" aria-label="Commits discarded">
        {commits.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
      {head ? (
        <>
          <p>
            Its last commit was <span className="mono">{head}</span>. Git keeps it for a while; to bring the branch back, run this in{" "}
            <span className="mono">{repo}</span>:
          </p>
          <BringBack branch={branch} head={head} />
        </>
      ) : (
        <p>Git did not say which commit the branch pointed at, so there is no command to bring it back.</p>
      )}
    </div>
  );
}

const BringBack = ({ branch, head }: { branch: string; head: string }) => (
  <CopyBlock text={`git branch ${branch} ${head}`} label="The command that brings the branch back" />
);
