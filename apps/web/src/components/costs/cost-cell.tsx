import type { CostTotals } from "@corral/shared";
import { totalCostText } from "../../lib/format/format.js";

/** A sum of costs in the words every view uses; unpriced jobs count as unknown, never as $0. */
export function CostCell({ t }: { t: CostTotals }) {
  const text = totalCostText(t);
  if (t.unpricedJobs > 0) return <span style={{ color: "var(--warn)" }}>{text}</span>;
  if (t.costUsd !== null) return text;
  return (
    <span className="muted" title="These jobs reported no token usage">
      {text}
    </span>
  );
}
