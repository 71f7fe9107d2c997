import type { DirEntry } from "@corral/shared";
import { useMemo, useState } from "react";
import { filesApi } from "../api/files.js";
import { EmptyState, ErrorState, Loading } from "../components/states.js";
import { formatBytes, formatTime, plural } from "../lib/format/format.js";
import { highlightHtml, isImage } from "../lib/format/highlight.js";
import { useDir, useFileContent, useWorkdirs } from "../hooks/use-files.js";
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

function Viewer({ path }: { path: string }) {
  const image = isImage(path);
  const file = useFileContent(path, !image);
  const html = useMemo(() => (file.data?.text ? highlightHtml(file.data.text, path) : null), [file.data, path]);
  const name = path.split("/").pop() ?? path;
  return (
    <section className="card viewer stack" aria-label={`File ${name}`}>
      <div className="row">
        <strong className="mono viewer-name" title={path}>
          {name}
        </strong>
        {file.data && (
          <span className="small muted">
            {formatBytes(file.data.size)} · {formatTime(file.data.mtime)}
          </span>
        )}
        <a className="button small" href={filesApi.rawUrl(path, true)} download={name}>
          Download
        </a>
      </div>
      {image ? (
        <img src={filesApi.rawUrl(path)} alt={name} />
      ) : file.isError ? (
        <ErrorState error={file.error} what={name} />
      ) : file.isPending ? (
        <Loading what={name} />
      ) : file.data.binary || file.data.text === null ? (
        <p className="muted">Binary file — download it to open it.</p>
      ) : (
        <>
          {html ? <pre className="block mono" dangerouslySetInnerHTML={{ __html: html }} /> : <pre className="block mono">{file.data.text}</pre>}
          {file.data.length < file.data.size && (
            <p className="small muted">
              Showing the first {formatBytes(file.data.length)} of {formatBytes(file.data.size)}; download for the rest.
            </p>
          )}
        </>
      )}
    </section>
  );
}

export function FilesPage() {
  const [params, setParams] = useSearchParams();
  const workdirs = useWorkdirs();
  const workdir = params.get("workdir") ?? workdirs.data?.workdirs[0]?.path ?? "";
  const selected = params.get("path") ?? "";
  const current = workdirs.data?.workdirs.find((w) => w.path === workdir);

  return (
    <>
      <div className="page-head">
        <h1>Files</h1>
        {workdirs.data && workdirs.data.workdirs.length > 0 && (
          <label className="row small workdir-pick">
            Workdir
            <select value={workdir} onChange={(e) => setParams({ workdir: e.target.value, path: undefined })} aria-label="Workdir">
              {!current && workdir && <option value={workdir}>{workdir}</option>}
              {workdirs.data.workdirs.map((w) => (
                <option key={w.path} value={w.path}>
                  {w.path}
                  {w.agents.length ? ` (${w.agents.join(", ")})` : ""}
                  {w.jobs ? ` · ${plural(w.jobs, "job")}` : ""}
                  {w.runner ? ` · on runner ${w.runner}` : ""}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {workdirs.isError ? (
        <ErrorState error={workdirs.error} what="workdirs" onRetry={() => void workdirs.refetch()} />
      ) : workdirs.isPending ? (
        <Loading what="workdirs" />
      ) : !workdir ? (
        <EmptyState title="No workdir to browse yet">Workdirs of agents and jobs appear here once they exist on disk.</EmptyState>
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
