import { formatFullTime, formatWhen } from "../lib/format/format.js";

/** A moment as the panel says it everywhere: "today 14:03:05" (formatWhen), the whole date and zone in its tooltip. */
export function When({ at, now, className = "when" }: { at: number; now: number; className?: string }) {
  return (
    <time className={className} dateTime={new Date(at).toISOString()} title={formatFullTime(at)}>
      {formatWhen(at, now)}
    </time>
  );
}
