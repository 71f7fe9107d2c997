import { useVirtualizer } from "@tanstack/react-virtual";
import { stripAnsi } from "@corral/shared";
import { type CSSProperties, memo, useEffect, useMemo, useRef, useState } from "react";
import { ansiSegments, markMatches, matchOffsets } from "../lib/format/ansi.js";
import { plural } from "../lib/format/format.js";
import type { OutputBuffer, OutputLine } from "../lib/domain/output-buffer.js";
import type { ReadableBuffer } from "../lib/domain/readable-buffer.js";
import { excerpt } from "../lib/domain/long-text.js";

export const OutputLineView = memo(function Line({
  line,
  number,
  query,
  current,
}: {
  line: OutputLine;
  number: number;
  query: string;
  current: boolean;
}) {
  const segments = useMemo(() => {
    const base = ansiSegments(line.text);
    return query ? markMatches(base, query) : base;
  }, [line.text, query]);
  return (
    <div className={`output-line ${line.stream}${current ? " current" : ""}`} data-stream={line.stream}>
      <span className="ln">{number}</span>
      {segments.map((s, i) =>
        s.match ? (
          <mark key={i} className={s.className} style={s.style}>
            {s.text}
          </mark>
        ) : (
          <span key={i} className={s.className} style={s.style}>
            {s.text}
          </span>
        ),
      )}
    </div>
  );
});

/** Lines that contain `query` (case-insensitive, colours ignored). */
export function matchingLines(lines: OutputLine[], query: string): number[] {
  if (!query) return [];
  const found: number[] = [];
  lines.forEach((line, i) => {
    if (matchOffsets(stripAnsi(line.text), query).length) found.push(i);
  });
  return found;
}

/** Search over the shown lines: the query, the lines it matches and the one in focus. */
function useOutputSearch(lines: OutputLine[]) {
  const [query, setQueryState] = useState("");
  const [currentMatch, setCurrentMatch] = useState(0);
  const matches = useMemo(() => matchingLines(lines, query), [lines, query]);
  const position = matches.length ? Math.min(currentMatch, matches.length - 1) : 0;
  const currentLine = matches.length ? matches[position] : undefined;
  const step = (delta: number) => {
    if (!matches.length) return;
    setCurrentMatch((c) => (Math.min(c, matches.length - 1) + delta + matches.length) % matches.length);
  };
  const setQuery = (q: string) => {
    setQueryState(q);
    setCurrentMatch(0);
  };
  return { query, setQuery, matches, position, currentLine, step, restart: () => setCurrentMatch(0) };
}

type OutputSearch = ReturnType<typeof useOutputSearch>;

function SearchBox({ search }: { search: OutputSearch }) {
  const { query, matches, position, step } = search;
  return (
    <div className="row grow" role="search" aria-label="Search in output">
      <input
        type="search"
        placeholder="Search output"
        aria-label="Search output"
        value={query}
        onChange={(e) => search.setQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            step(e.shiftKey ? -1 : 1);
          }
        }}
      />
      {query && (
        <span className="small muted" aria-live="polite">
          {matches.length ? `${position + 1} of ${plural(matches.length, "line")}` : "no match"}
        </span>
      )}
      {matches.length > 1 && (
        <>
          <button type="button" className="small" onClick={() => step(-1)} aria-label="Previous match">
            ↑
          </button>
          <button type="button" className="small" onClick={() => step(1)} aria-label="Next match">
            ↓
          </button>
        </>
      )}
    </div>
  );
}

function ViewToggle({ readableShown, onPick }: { readableShown: boolean; onPick: (raw: boolean) => void }) {
  return (
    <div className="row" role="group" aria-label="Output view">
      {(["Readable", "Raw"] as const).map((label) => {
        const pressed = (label === "Readable") === readableShown;
        return (
          <button
            key={label}
            type="button"
            className={`small${pressed ? " primary" : ""}`}
            aria-pressed={pressed}
            title={label === "Readable" ? "One short line per worker event" : "The worker's output as printed"}
            onClick={() => onPick(label === "Raw")}
          >
            {label}
          </button>
        );
      })}
    </div>
  );
}

/**
 * Scrolling for the log: virtualized rows, kept at the end while following, centred on the
 * current match, and paused only by the user's own scrolling (our scrollToIndex and late line
 * measuring must not pause it).
 */
function useLogScroll(count: number, follow: boolean, setFollow: (follow: boolean) => void, currentLine: number | undefined) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 20,
    overscan: 20,
    // Rows render on the first paint, before the container has been measured.
    initialRect: { width: 800, height: 480 },
  });

  useEffect(() => {
    if (follow && count) virtualizer.scrollToIndex(count - 1, { align: "end" });
  }, [follow, count, virtualizer]);

  useEffect(() => {
    if (currentLine !== undefined) {
      setFollow(false);
      virtualizer.scrollToIndex(currentLine, { align: "center" });
    }
  }, [currentLine, virtualizer, setFollow]);

  const userIntentAt = useRef(0);
  const markIntent = () => {
    userIntentAt.current = Date.now();
  };
  const onScroll = () => {
    const el = scrollRef.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (atBottom && !follow && Date.now() - userIntentAt.current < 1000) setFollow(true);
    else if (!atBottom && follow && Date.now() - userIntentAt.current < 1000) setFollow(false);
  };
  return { scrollRef, virtualizer, onScroll, markIntent };
}

/** The line-number gutter as wide as the last number (in digits of the log's monospace font). */
export function gutterStyle(lastLine: number): CSSProperties {
  return { "--ln-digits": Math.max(4, String(lastLine).length) } as CSSProperties;
}

/** The scrolling log of what is shown, one row per line. `failed`: why the rest could not be read. */
function OutputLog(props: {
  shown: OutputBuffer | ReadableBuffer;
  running: boolean;
  failed: string | null;
  follow: boolean;
  setFollow: (follow: boolean) => void;
  query: string;
  currentLine: number | undefined;
}) {
  const { shown, running, failed, follow, setFollow, query, currentLine } = props;
  const lines = shown.lines;
  const { scrollRef, virtualizer, onScroll, markIntent } = useLogScroll(lines.length, follow, setFollow, currentLine);

  return (
    <div
      ref={scrollRef}
      className="output mono"
      style={gutterStyle(shown.dropped + lines.length)}
      onScroll={onScroll}
      onWheel={markIntent}
      onTouchMove={markIntent}
      onMouseDown={markIntent}
      onKeyDown={markIntent}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling log must take focus to scroll from the keyboard
      tabIndex={0}
      role="log"
      aria-label="Job output"
      aria-live="off"
    >
      {shown.dropped > 0 && (
        <div className="output-line sys">
          <span className="ln" />… {plural(shown.dropped, "earlier line")} not kept in the browser
        </div>
      )}
      {lines.length === 0 && !failed ? (
        <div className="output-line sys">
          <span className="ln" />
          {running ? "waiting for output…" : shown.complete ? "(no output)" : "loading output…"}
        </div>
      ) : lines.length === 0 ? null : (
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {virtualizer.getVirtualItems().map((item) => {
            const line = lines[item.index];
            if (!line) return null;
            return (
              <div
                key={item.key}
                data-index={item.index}
                ref={virtualizer.measureElement}
                style={{ position: "absolute", top: 0, left: 0, width: "100%", transform: `translateY(${item.start}px)` }}
              >
                <OutputLineView line={line} number={item.index + 1 + shown.dropped} query={query} current={item.index === currentLine} />
              </div>
            );
          })}
        </div>
      )}
      {failed && (
        <div className="output-line err" role="alert">
          <span className="ln" />
          {lines.length ? "could not read the rest of the output" : "could not load the output"}: {failed}
        </div>
      )}
    </div>
  );
}

/**
 * A job's output: virtualized so a long log stays smooth, following the end while the user is
 * at the bottom and pausing as soon as they scroll up. With a `readable` buffer (an agent kind
 * whose events the server reads) it shows one readable line per event by default, and the raw
 * output on request; search, follow and line numbers work on what is shown. `readableError`:
 * why the readable view could not be read, shown in its place rather than "loading" forever.
 */
export function OutputView({
  buffer,
  running,
  readable = null,
  readableError = null,
}: {
  buffer: OutputBuffer;
  running: boolean;
  readable?: ReadableBuffer | null;
  readableError?: unknown;
}) {
  const [follow, setFollow] = useState(true);
  // Until the user picks, readable is the default whenever the agent's kind has events.
  const [rawChosen, setRawChosen] = useState<boolean | null>(null);
  const shown = readable !== null && rawChosen !== true ? readable : buffer;
  const search = useOutputSearch(shown.lines);
  const failed = shown === readable && readableError ? (readableError instanceof Error ? readableError.message : String(readableError)) : null;

  return (
    <div>
      <div className="output-toolbar">
        <SearchBox search={search} />
        {readable && (
          <ViewToggle
            readableShown={shown === readable}
            onPick={(raw) => {
              setRawChosen(raw);
              search.restart();
            }}
          />
        )}
        <span className="small muted">{lineCount(shown)}</span>
        <button
          type="button"
          className={`small${follow ? " primary" : ""}`}
          aria-pressed={follow}
          onClick={() => setFollow(!follow)}
          title="Keep the newest output in view"
        >
          {follow ? "Following" : running ? "Paused — follow" : "Follow"}
        </button>
      </div>
      <OutputLog
        shown={shown}
        running={running}
        failed={failed}
        follow={follow}
        setFollow={setFollow}
        query={search.query}
        currentLine={search.currentLine}
      />
    </div>
  );
}

/**
 * How many lines the view holds, truthfully: once the browser has dropped the oldest, "the last
 * 100,000 of 1,500,004 lines", whose last number is the one the gutter reaches.
 */
export function lineCount({ lines, dropped }: { lines: unknown[]; dropped: number }): string {
  const total = dropped + lines.length;
  return dropped > 0 ? `the last ${lines.length.toLocaleString("en-US")} of ${plural(total, "line")}` : plural(total, "line");
}

/**
 * Text with colour codes (an answer, the end of an output), rendered like the log. A long one
 * shows its first lines (`keep` "end": its last, for output still arriving) with *Show all*.
 */
export function AnsiText({ text, keep = "start" }: { text: string; keep?: "start" | "end" }) {
  const [all, setAll] = useState(false);
  const part = excerpt(text, keep);
  const shown = all || !part.cut ? text : part.text;
  return (
    <div className="long-text">
      {part.cut && !all && keep === "end" && <p className="muted small">… the start is left out</p>}
      <pre className="block mono">
        {ansiSegments(shown).map((s, i) => (
          <span key={i} className={s.className} style={s.style}>
            {s.text}
          </span>
        ))}
      </pre>
      {part.cut && (
        <button type="button" className="small" aria-expanded={all} onClick={() => setAll(!all)}>
          {all ? "Show less" : `Show all (${plural(part.lines, "line")})`}
        </button>
      )}
    </div>
  );
}
