import type { JobStatus } from "@corral/shared";
import { statusLabels } from "../lib/format/format.js";

const tone: Record<JobStatus, string> = {
  queued: "neutral",
  running: "info",
  succeeded: "ok",
  failed: "bad",
  cancelled: "warn",
  timed_out: "bad",
  budget_exceeded: "bad",
  lost: "bad",
};

export function StatusBadge({ status }: { status: JobStatus }) {
  return (
    <span className={`badge ${tone[status]}`} data-status={status}>
      <span className={`dot${status === "running" ? " pulse" : ""}`} aria-hidden="true" />
      {statusLabels[status]}
    </span>
  );
}
