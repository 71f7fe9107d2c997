import type { DirEntry } from "@corral/shared";
import { useEffect, useMemo, useRef, useState } from "react";
import { filesApi } from "../api/files.js";
import { EmptyState, ErrorState, Loading } from "../components/states.js";
import { WorkdirPicker } from "../components/workdir-picker.js";
import { FILE_PART_BYTES, joinParts } from "../lib/domain/file-parts.js";
import { openingWorkdir } from "../lib/domain/workdir-choice.js";
import { formatBytes, formatTime } from "../lib/format/format.js";
import { highlightHtml, isImage } from "../lib/format/highlight.js";
import { useDir, useFileParts, useWorkdirs } from "../hooks/use-files.js";
import { useSearchParams } from "../router.js";

const join = (dir: string, name: string) => `${dir.replace(/\/$/, "")}/${name}`;

function DirNode({ path, depth, selected, onSelect }: { path: string; depth: number; selected: string; onSelect: (p: string) => void }) {
  const dir = useDir(path);
  if (dir.isError)
    return (
      <li className="small" style={{ color: "var(--danger)", paddingLeft: depth * 14 }}>
        {dir.error.message}
      </li>
    );
  if (dir.isPending)
    return (
      <li className="small muted" style={{ paddingLeft: depth * 14 }}>
        …
      </li>
    );
  const entries = [...dir.data.entries].sort((a, b) =>
    (a.type === "dir") === (b.type === "dir") ? a.name.localeCompare(b.name) : a.type === "dir" ? -1 : 1,
  );
  if (entries.length === 0)
    return (
      <li className="small muted" style={{ paddingLeft: depth * 14 + 8 }}>
        (empty)
      </li>
    );
  return (
    <>
      {entries.map((e) => (
        <Entry key={e.name} entry={e} parent={path} depth={depth} selected={selected} onSelect={onSelect} />
      ))}
      {dir.data.truncated && (
        <li className="small muted" style={{ paddingLeft: depth * 14 }}>
          … more entries not shown
        </li>
      )}
    </>
  );
}

function Entry({
  entry,
  parent,
  depth,
  selected,
  onSelect,
}: {
  entry: DirEntry;
  parent: string;
  depth: number;
  selected: string;
  onSelect: (p: string) => void;
}) {
  const full = join(parent, entry.name);
  const isDir = entry.type === "dir";
  const [expanded, setExpanded] = useState(selected.startsWith(`${full}/`));
  return (
    <>
      <li>
        <button
          type="button"
          style={{ paddingLeft: depth * 14 + 6 }}
          aria-current={selected === full ? "true" : undefined}
          aria-expanded={isDir ? expanded : undefined}
          onClick={() => (isDir ? setExpanded((x) => !x) : onSelect(full))}
        >
          <span aria-hidden="true">{isDir ? (expanded ? "▾" : "▸") : " "}</span>
          <span className="mono truncate" title={entry.name}>
            {entry.name}
            {isDir ? "/" : ""}
          </span>
          {entry.size !== null && !isDir && <span className="size">{formatBytes(entry.size)}</span>}
        </button>
      </li>
      {isDir && expanded && <DirNode path={full} depth={depth + 1} selected={selected} onSelect={onSelect} />}
    </>
  );
}

/** An image at its own size, made smaller only to fit (never larger), with its size in pixels. */
function ImageView({ path, name }: { path: string; name: string }) {
  const [pixels, setPixels] = useState<{ width: number; height: number } | null>(null);
  const [shownWidth, setShownWidth] = useState<number | null>(null);
  const img = useRef<HTMLImageElement>(null);
  // The share it is shown at follows the window: a narrower one makes a wide image smaller.
  useEffect(() => {
    const el = img.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => setShownWidth(el.clientWidth));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const scaled = pixels && shownWidth !== null && shownWidth < pixels.width ? Math.round((shownWidth / pixels.width) * 100) : null;
  return (
    <figure className="image-view">
      <img
        ref={img}
        src={filesApi.rawUrl(path)}
        alt={name}
        onLoad={(e) => {
          const img = e.currentTarget;
          setPixels({ width: img.naturalWidth, height: img.naturalHeight });
          setShownWidth(img.clientWidth);
        }}
      />
      {pixels && (
        <figcaption className="small muted">
          {pixels.width} × {pixels.height} px{scaled !== null ? ` · shown at ${scaled}% to fit` : ""}
        </figcaption>
      )}
    </figure>
  );
}

/** A text file a part at a time: the first 512 KB, and the next on asking, until its end. */
function TextView({ path, name }: { path: string; name: string }) {
  const file = useFileParts(path, true);
  const parts = file.data?.pages;
  const joined = useMemo(() => (parts ? joinParts(parts) : null), [parts]);
  const html = useMemo(() => (joined?.text ? highlightHtml(joined.text, path) : null), [joined, path]);
  if (file.isError && !parts) return <ErrorState error={file.error} what={name} />;
  if (!parts || !joined) return <Loading what={name} />;
  const first = parts[0];
  if (first?.binary || first?.text === null) return <p className="muted">Binary file — download it to open it.</p>;
  const next = Math.min(FILE_PART_BYTES, joined.left);
  return (
    <>
      {html ? <pre className="block mono" dangerouslySetInnerHTML={{ __html: html }} /> : <pre className="block mono">{joined.text}</pre>}
      {joined.left > 0 && (
        <div className="row small">
          <span className="muted" role="status">
            Showing the first {formatBytes(joined.shown)} of {formatBytes(joined.size)}.
          </span>
          {file.hasNextPage && (
            <button type="button" className="small" disabled={file.isFetchingNextPage} onClick={() => void file.fetchNextPage()}>
              {file.isFetchingNextPage
                ? "Loading…"
                : next < joined.left
                  ? `Show the next ${formatBytes(next)}`
                  : `Show the rest (${formatBytes(next)})`}
            </button>
          )}
        </div>
      )}
      {file.isFetchNextPageError && <ErrorState error={file.error} what={`the next part of ${name}`} onRetry={() => void file.fetchNextPage()} />}
    </>
  );
}

function Viewer({ path }: { path: string }) {
  const image = isImage(path);
  // The first part carries the facts (size, time); for an image, only those (it is binary).
  const facts = useFileParts(path, true).data?.pages[0];
  const name = path.split("/").pop() ?? path;
  return (
    <section className="card viewer stack" aria-label={`File ${name}`}>
      <div className="row">
        <strong className="mono viewer-name" title={path}>
          {name}
        </strong>
        {facts && (
          <span className="small muted">
            {formatBytes(facts.size)} · {formatTime(facts.mtime)}
          </span>
        )}
        <a className="button small" href={filesApi.rawUrl(path, true)} download={name}>
          Download
        </a>
      </div>
      {image ? <ImageView path={path} name={name} /> : <TextView path={path} name={name} />}
    </section>
  );
}

export function FilesPage() {
  const [params, setParams] = useSearchParams();
  const workdirs = useWorkdirs();
  const known = workdirs.data?.workdirs;
  const selected = params.get("path") ?? "";
  const workdir = known ? openingWorkdir(known, { workdir: params.get("workdir"), path: params.get("path") }) : null;
  const current = known?.find((w) => w.path === workdir);

  // The URL stays the truth: once a workdir is opened for the page, it says which, so a link or a
  // reload opens the same one even after jobs run elsewhere.
  useEffect(() => {
    if (workdir && !params.get("workdir")) setParams({ workdir }, { replace: true });
  }, [workdir, params, setParams]);

  return (
    <>
      <div className="page-head">
        <h1>Files</h1>
        {known && known.length > 0 && (
          <WorkdirPicker
            workdirs={!current && workdir ? [{ path: workdir, agents: [], jobs: 0, lastJobAt: null }, ...known] : known}
            value={workdir ?? ""}
            onChange={(path) => setParams({ workdir: path, path: undefined }, { replace: false })}
          />
        )}
      </div>
      {workdirs.isError ? (
        <ErrorState error={workdirs.error} what="workdirs" onRetry={() => void workdirs.refetch()} />
      ) : !known ? (
        <Loading what="workdirs" />
      ) : known.length === 0 && !workdir ? (
        <EmptyState title="No workdir to browse yet">Workdirs of agents and jobs appear here once they exist on disk.</EmptyState>
      ) : !workdir ? (
        <EmptyState title="Choose a workdir">
          No job has run yet, so there is no last one to open: pick one of the {known.length} workdirs above. Type part of its path or an agent's name
          to find it.
        </EmptyState>
      ) : (
        <div className="browser">
          <nav className="card" aria-label="Workdir tree" style={{ overflow: "auto", maxHeight: "75vh" }}>
            <div className="small muted mono truncate" title={workdir} style={{ marginBottom: "0.4rem" }}>
              {workdir}
            </div>
            {current?.runner && <div className="small muted">on runner {current.runner}</div>}
            <ul className="tree">
              <DirNode key={workdir} path={workdir} depth={0} selected={selected} onSelect={(p) => setParams({ path: p })} />
            </ul>
          </nav>
          {selected ? (
            <Viewer key={selected} path={selected} />
          ) : (
            <EmptyState title="Choose a file">Files the workers write appear in the tree as they are written.</EmptyState>
          )}
        </div>
      )}
    </>
  );
}
