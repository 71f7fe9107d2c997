import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { formatAgo, plural } from "../lib/format/format.js";
import { type KnownWorkdir, matchWorkdirs } from "../lib/domain/workdir-choice.js";

function details(w: KnownWorkdir, now: number): string {
  return [
    w.agents.length ? w.agents.join(", ") : null,
    w.jobs ? plural(w.jobs, "job") : "no jobs yet",
    w.lastJobAt != null ? `used ${formatAgo(w.lastJobAt, now)}` : null,
    w.runner ? `on runner ${w.runner}` : null,
  ]
    .filter(Boolean)
    .join(" · ");
}

/**
 * A workdir chosen from many by typing part of its path or an agent's name (a combobox: arrows
 * move through the matches, Enter picks, Escape puts the current one back), most recently used first.
 */
export function WorkdirPicker({ workdirs, value, onChange }: { workdirs: KnownWorkdir[]; value: string; onChange: (path: string) => void }) {
  const id = useId();
  const listId = `${id}-list`;
  const [open, setOpen] = useState(false);
  // What was typed; null until something is, so opening lists every workdir.
  const [typed, setTyped] = useState<string | null>(null);
  const matches = matchWorkdirs(workdirs, typed ?? "");
  const [active, setActive] = useState(0);
  const list = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (open) list.current?.querySelector('[data-active="true"]')?.scrollIntoView({ block: "nearest" });
  }, [open, active]);

  const openList = () => {
    setOpen(true);
    setTyped(null);
    setActive(
      Math.max(
        0,
        matchWorkdirs(workdirs, "").findIndex((w) => w.path === value),
      ),
    );
  };
  const close = () => {
    setOpen(false);
    setTyped(null);
  };
  const choose = (path: string) => {
    close();
    if (path !== value) onChange(path);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!open) return openList();
      const step = e.key === "ArrowDown" ? 1 : -1;
      setActive((i) => Math.min(Math.max(i + step, 0), Math.max(matches.length - 1, 0)));
    } else if (e.key === "Enter" && open) {
      e.preventDefault();
      const pick = matches[active];
      if (pick) choose(pick.path);
    } else if (e.key === "Escape" && open) {
      e.preventDefault();
      close();
    }
  };

  const now = Date.now();
  const activeId = open && matches[active] ? `${id}-${active}` : undefined;
  return (
    <div className="workdir-pick">
      <label htmlFor={`${id}-input`}>Workdir</label>
      <div className="combo">
        <input
          id={`${id}-input`}
          className="mono combo-input"
          role="combobox"
          aria-expanded={open}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={activeId}
          autoComplete="off"
          spellCheck={false}
          placeholder="Type part of a path or an agent's name"
          title={value || undefined}
          value={typed ?? value}
          onFocus={(e) => {
            openList();
            e.currentTarget.select();
          }}
          onClick={() => !open && openList()}
          onBlur={close}
          onChange={(e) => {
            setOpen(true);
            setTyped(e.target.value);
            setActive(0);
          }}
          onKeyDown={onKeyDown}
        />
        {open && (
          <div className="combo-pop">
            <div id={listId} ref={list} role="listbox" aria-label="Workdirs" hidden={matches.length === 0}>
              {matches.map((w, i) => (
                // biome-ignore lint/a11y/useKeyWithClickEvents: the keys are the box's (arrows, Enter, Escape); the focus never leaves it
                <div
                  key={w.path}
                  id={`${id}-${i}`}
                  role="option"
                  tabIndex={-1}
                  aria-selected={i === active}
                  data-active={i === active}
                  data-current={w.path === value || undefined}
                  // Keep the focus in the box: a click picks without blurring it first.
                  onMouseDown={(e) => e.preventDefault()}
                  onMouseMove={() => setActive(i)}
                  onClick={() => choose(w.path)}
                >
                  <span className="mono combo-path">{w.path}</span>
                  <span className="small muted">{details(w, now)}</span>
                </div>
              ))}
            </div>
            {matches.length === 0 && <p className="small muted combo-none">No workdir matches “{typed}”.</p>}
          </div>
        )}
      </div>
      <span className="visually-hidden" role="status">
        {open && typed ? `${plural(matches.length, "workdir")} of ${workdirs.length} match` : ""}
      </span>
    </div>
  );
}
